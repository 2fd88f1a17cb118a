import type { Registry, RegistryContentType } from 'prom-client';

/**
 * Counters and histograms for the hot path: each series (one set of label values) is an object
 * the caller looks up once and keeps, and an observation is a few additions to it. prom-client's
 * own `inc(labels)` and `observe(labels, value)` check and hash the label object on every call,
 * which cost ~1.5 µs of each request in the rpc-proxy's benchmark (docs/performance/rpc-proxy.md,
 * "Tenth round"). The registry reads these at each scrape, in the same text prom-client writes
 * for its own counters and histograms.
 */

/** One series of a {@link SeriesCounter}. */
export interface CounterSeries {
  inc(by?: number): void;
}

/** One series of a {@link SeriesHistogram}. */
export interface HistogramSeries {
  observe(value: number): void;
}

/** A counter whose series are looked up by label values (in `labelNames` order) and kept by the caller. */
export interface SeriesCounter {
  series(...values: string[]): CounterSeries;
}

/** A histogram whose series are looked up by label values (in `labelNames` order) and kept by the caller. */
export interface SeriesHistogram {
  series(...values: string[]): HistogramSeries;
}

interface Definition {
  name: string;
  help: string;
  labelNames: readonly string[];
}

type Labels = Record<string, string | number>;
/** A sample as prom-client's registry renders it (`labels` first, then `sharedLabels`). */
interface Sample {
  labels: Labels;
  exemplar?: null;
  sharedLabels?: Labels;
  value: number;
  metricName?: string;
}
interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Sample[];
  aggregator: 'sum';
}

/** What prom-client's registry asks of a metric: what its own Counter and Histogram answer. */
interface RegisteredMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<MetricData>;
  getForPromString(): Promise<MetricData>;
  reset(): void;
}

/** The series of one metric, by the label values joined (a NUL cannot be in a label value we make). */
class Family<S> {
  readonly all = new Map<string, { labels: Labels; state: S }>();
  constructor(
    private readonly definition: Definition,
    private readonly fresh: () => S,
    /** Zeroes a series in place (its holders keep counting into it). */
    private readonly zero: (state: S) => void,
  ) {}

  reset(): void {
    for (const { state } of this.all.values()) this.zero(state);
  }

  find(values: string[]): S {
    const key = values.join('\u0000');
    let found = this.all.get(key);
    if (found === undefined) {
      const { labelNames, name } = this.definition;
      if (values.length !== labelNames.length)
        throw new TypeError(`${name}: ${labelNames.length} label values expected, got ${values.length}`);
      const labels: Labels = {};
      labelNames.forEach((label, i) => (labels[label] = values[i] as string));
      found = { labels, state: this.fresh() };
      this.all.set(key, found);
    }
    return found.state;
  }
}

/** A counter of series (see the module's comment), registered in `registry`. */
export function seriesCounter(registry: Registry<RegistryContentType>, definition: Definition): SeriesCounter {
  const family = new Family(
    definition,
    () => ({ value: 0 }),
    (state) => (state.value = 0),
  );
  const data = async (): Promise<MetricData> => ({
    name: definition.name,
    help: definition.help,
    type: 'counter',
    aggregator: 'sum',
    values: [...family.all.values()].map(({ labels, state }) => ({ labels: { ...labels }, value: state.value })),
  });
  register(registry, {
    name: definition.name,
    help: definition.help,
    type: 'counter',
    aggregator: 'sum',
    get: data,
    getForPromString: data,
    reset: () => family.reset(),
  });
  return {
    series(...values) {
      const state = family.find(values);
      return {
        inc(by = 1) {
          state.value += by;
        },
      };
    },
  };
}

/** A histogram of series (see the module's comment), registered in `registry`; `buckets` ascending. */
export function seriesHistogram(
  registry: Registry<RegistryContentType>,
  definition: Definition & { buckets: readonly number[] },
): SeriesHistogram {
  const bounds = [...definition.buckets].sort((a, b) => a - b);
  const family = new Family(
    definition,
    () => ({ counts: new Float64Array(bounds.length), sum: 0, count: 0 }),
    (state) => {
      state.counts.fill(0);
      state.sum = 0;
      state.count = 0;
    },
  );
  const { name } = definition;
  /** As prom-client's Histogram: `labels` {le} and the series' labels as `sharedLabels` (rendered after `le`). */
  const samples = (): Sample[] => {
    const out: Sample[] = [];
    for (const { labels, state } of family.all.values()) {
      let cumulative = 0;
      bounds.forEach((le, i) => {
        cumulative += state.counts[i] as number;
        out.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: state.count, metricName: `${name}_bucket` });
      out.push({ labels: {}, sharedLabels: labels, value: state.sum, metricName: `${name}_sum` });
      out.push({ labels: {}, sharedLabels: labels, value: state.count, metricName: `${name}_count` });
    }
    return out;
  };
  const base = { name, help: definition.help, type: 'histogram' as const, aggregator: 'sum' as const };
  register(registry, {
    ...base,
    getForPromString: async () => ({ ...base, values: samples() }),
    // As prom-client's get(): the series' labels and `le` in one object.
    get: async () => ({
      ...base,
      values: samples().map(({ labels, sharedLabels, value, metricName }) => ({
        labels: { ...sharedLabels, ...labels },
        value,
        metricName,
        // No exemplars: prom-client says so with null on each bucket.
        ...(metricName === `${name}_bucket` ? { exemplar: null } : {}),
      })),
    }),
    reset: () => family.reset(),
  });
  return {
    series(...values) {
      const state = family.find(values);
      return {
        observe(value) {
          if (!Number.isFinite(value)) throw new TypeError(`${name}: not a finite number: ${value}`);
          state.sum += value;
          state.count += 1;
          // The first bound at or above the value (none: only in +Inf, which is the count).
          const { counts } = state;
          for (let i = 0; i < bounds.length; i++) {
            if (value <= (bounds[i] as number)) {
              counts[i] = (counts[i] as number) + 1;
              break;
            }
          }
        },
      };
    },
  };
}

function register(registry: Registry<RegistryContentType>, metric: RegisteredMetric): void {
  // The registry renders any object with prom-client's metric interface; its typings name its own classes only.
  registry.registerMetric(metric as unknown as Parameters<Registry<RegistryContentType>['registerMetric']>[0]);
}
