import { spawnSync } from 'node:child_process';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One sample of a parsed family (counters and gauges: `value`; histograms: `buckets`, `count`, `sum`). */
export interface Sample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

/** A metric family as the parser returns it. */
export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Sample[];
}

/** Parses Prometheus text exposition with a real parser (`parse-prometheus-text-format`); throws on malformed text. */
export function parseMetrics(text: string): Map<string, Family> {
  const families = parsePrometheusTextFormat(text) as Family[];
  return new Map(families.map((family) => [family.name, family]));
}

/**
 * The value of one series: the samples of `name` whose labels include `labels`, summed (an
 * unlabelled histogram: its `count`); 0 when none matches, undefined when the family is absent.
 * The parser folds a labelled histogram's series together and keeps only its buckets: assert on the
 * matching `_total` counter for those.
 */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = families.get(name);
  if (family === undefined) return undefined;
  let total = 0;
  for (const sample of family.metrics) {
    const matches = Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value);
    if (!matches) continue;
    total += Number(sample.value ?? sample.count ?? 0);
  }
  return total;
}

/** Scrapes `url` (GET) and parses the answer; rejects unless it is 200 Prometheus text. */
export async function scrape(url: string, init: { headers?: Record<string, string> } = {}): Promise<Map<string, Family>> {
  const response = await fetch(url, { headers: init.headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`scrape ${url}: status ${response.status}: ${text.slice(0, 200)}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain')) throw new Error(`scrape ${url}: content-type ${type}`);
  return parseMetrics(text);
}

/** What `promtool check metrics` said of a scrape: its exit status and its lines (problems, one a line). */
export interface PromtoolVerdict {
  status: number;
  problems: string[];
}

/**
 * Runs Prometheus's own linter, `promtool check metrics` (Debian's `prometheus` package), over
 * exposition text. `PROMTOOL` names the binary, else `promtool` on PATH. Throws, saying what to
 * install, when neither runs: a metrics check never passes for want of the tool.
 */
export function promtoolCheck(text: string): PromtoolVerdict {
  const binary = process.env.PROMTOOL ?? 'promtool';
  const run = spawnSync(binary, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error !== undefined) {
    throw new Error(`promtool could not run (${run.error.message}): install Debian's prometheus package or set PROMTOOL`);
  }
  const problems = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line.trim() !== '');
  return { status: run.status ?? -1, problems };
}
