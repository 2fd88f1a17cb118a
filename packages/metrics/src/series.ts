import type { Registry, RegistryContentType } from 'prom-client';

/**
 * Counters and histograms for the hot path: each series (one set of label values) is one object,
 * made once, which a caller may look up each time (a join and a map lookup) or keep, and an
 * observation is a few additions to it. prom-client's
 * own `inc(labels)` and `observe(labels, value)` check and hash the label object on every call,
 * a visible share of a short request's CPU. The registry reads these at each scrape, in the same text prom-client writes
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

/** A counter of series: `series(...)` the one of these label values (in `labelNames` order), the same object each time. */
export interface SeriesCounter {
  series(...values: string[]): CounterSeries;
}

/** A histogram of series: `series(...)` the one of these label values (in `labelNames` order), the same object each time. */
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

/** A series as its family keeps it: what callers hold, and how it is zeroed. */
interface Kept {
  reset(): void;
}

/**
 * The series of one metric by their label values (joined: a NUL cannot be in a label value we
 * make), each made once: {@link Family.find} returns the same object for the same values.
 */
class Family<S extends Kept> {
  readonly all = new Map<string, { labels: Labels; series: S }>();
  constructor(
    private readonly definition: Definition,
    private readonly make: () => S,
  ) {}

  /** Zeroes every series in place (their holders keep counting into them). */
  reset(): void {
    for (const { series } of this.all.values()) series.reset();
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
      found = { labels, series: this.make() };
      this.all.set(key, found);
    }
    return found.series;
  }
}

class CounterSeriesState implements CounterSeries, Kept {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
  reset(): void {
    this.value = 0;
  }
}

class HistogramSeriesState implements HistogramSeries, Kept {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    private readonly name: string,
    /** Upper bounds, ascending. */
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    this.sum += value;
    this.count += 1;
    // The first bound at or above the value (none: only in +Inf, which is the count).
    const { bounds, counts } = this;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        counts[i] = (counts[i] as number) + 1;
        break;
      }
    }
  }
  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/** A counter of series (see the module's comment), registered in `registry`. */
export function seriesCounter(registry: Registry<RegistryContentType>, definition: Definition): SeriesCounter {
  const family = new Family(definition, () => new CounterSeriesState());
  const data = async (): Promise<MetricData> => ({
    name: definition.name,
    help: definition.help,
    type: 'counter',
    aggregator: 'sum',
    values: [...family.all.values()].map(({ labels, series }) => ({ labels: { ...labels }, value: series.value })),
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
  return { series: (...values) => family.find(values) };
}

/** A histogram of series (see the module's comment), registered in `registry`. */
export function seriesHistogram(
  registry: Registry<RegistryContentType>,
  definition: Definition & { buckets: readonly number[] },
): SeriesHistogram {
  const bounds = [...definition.buckets].sort((a, b) => a - b);
  const { name } = definition;
  const family = new Family(definition, () => new HistogramSeriesState(name, bounds));
  /** As prom-client's Histogram: `labels` {le} and the series' labels as `sharedLabels` (rendered after `le`). */
  const samples = (): Sample[] => {
    const out: Sample[] = [];
    for (const { labels, series } of family.all.values()) {
      let cumulative = 0;
      bounds.forEach((le, i) => {
        cumulative += series.counts[i] as number;
        out.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: series.count, metricName: `${name}_bucket` });
      out.push({ labels: {}, sharedLabels: labels, value: series.sum, metricName: `${name}_sum` });
      out.push({ labels: {}, sharedLabels: labels, value: series.count, metricName: `${name}_count` });
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
  return { series: (...values) => family.find(values) };
}

function register(registry: Registry<RegistryContentType>, metric: RegisteredMetric): void {
  // The registry renders any object with prom-client's metric interface; its typings name its own classes only.
  registry.registerMetric(metric as unknown as Parameters<Registry<RegistryContentType>['registerMetric']>[0]);
}
