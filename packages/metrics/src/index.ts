import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
  type RegistryContentType,
} from 'prom-client';
import {
  seriesCounter,
  seriesHistogram,
  type CounterSeries,
  type HistogramSeries,
  type SeriesCounter,
  type SeriesHistogram,
} from './series';

export { Counter, Gauge, Histogram, Registry };
export { processCpuMicros, processCpuTimes, threadCpuMicros, type CpuTimes } from './process-cpu';
export * from './series';

/** Seconds buckets for HTTP requests: 1 ms to 10 s. */
export const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route label of a request no route matched (404s): one label value, never the raw path. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * A service's metrics (docs/README.md, "Operations"): its own registry (nothing global, so two apps
 * in one test process do not collide), the process metrics with the service's prefix left off
 * (`process_*`, `nodejs_*`), and the request count and duration by method, route pattern and status.
 */
export interface ServiceMetrics {
  readonly registry: Registry<RegistryContentType>;
  /**
   * Records one finished request in `http_requests_total{method,route,status}` and
   * `http_request_duration_seconds{method,route,status}`. `route` is a pattern (`/v1/:key`), never a raw path.
   */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  counter<L extends string = never>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L>;
  gauge<L extends string = never>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L>;
  histogram<L extends string = never>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L>;
  /** A counter for the hot path: series looked up once and kept ({@link seriesCounter}). */
  seriesCounter(config: { name: string; help: string; labelNames: readonly string[] }): SeriesCounter;
  /** A histogram for the hot path: series looked up once and kept ({@link seriesHistogram}). */
  seriesHistogram(config: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[] }): SeriesHistogram;
  /** A counter whose value is kept elsewhere (a cache's hits, a queue's drops): `read()` at each scrape. */
  readonly readCounter: (name: string, help: string, read: () => number) => Counter;
  /**
   * `read`, called at most once per scrape (through {@link handler} or {@link serve}): for many
   * series read from one record, so they agree with each other.
   */
  perScrape<T>(read: () => T): () => T;
  /**
   * Starts the process metrics (CPU, memory, event-loop delay: a monitor that runs from then on);
   * the app's `start()` calls it, `createApp` never does. Idempotent.
   */
  start(): void;
  /** Express middleware that records every request when its response finishes or the client goes away. */
  middleware(): RequestHandler;
  /** Express handler for `GET /metrics` (Prometheus text format 0.0.4, whatever `Accept` asks). */
  handler(): RequestHandler;
  /** Answers a scrape on a plain `node:http` response. */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface MetricsOptions {
  /** The service name (Prometheus's `job` label names it on the scraper's side; kept for logs). */
  service: string;
  /** Collect the process metrics (CPU, memory, event loop lag, GC); default true. */
  processMetrics?: boolean;
}

/** prom-client's default gauges whose names end in `_total` (see `start()`). */
const GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** A bounded method label: the usual verbs, anything else `other`. */
export function methodLabel(method: string | undefined): string {
  const upper = (method ?? '').toUpperCase();
  return METHODS.has(upper) ? upper : 'other';
}

/**
 * The route pattern express matched (`/v1/:key`), else the pattern a handler mounted with `app.use`
 * put in `res.locals.route`, else `unmatched`.
 */
function expressRoute(req: { baseUrl?: string; route?: { path?: unknown } }, locals: Record<string, unknown>): string {
  const path = req.route?.path;
  if (typeof path !== 'string') return typeof locals.route === 'string' ? locals.route : UNMATCHED_ROUTE;
  const route = `${req.baseUrl ?? ''}${path}`;
  return route === '' ? '/' : route;
}

export function createMetrics(options: MetricsOptions): ServiceMetrics {
  const registry = new Registry<RegistryContentType>();
  let started = false;

  const requests = seriesCounter(registry, {
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
  });
  const requestDuration = seriesHistogram(registry, {
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of its response, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: REQUEST_BUCKETS,
  });
  /** The series of each method label, route and status, found once each (no label string joined a request). */
  const series = new Map<string, Map<string, Map<number, { count: CounterSeries; duration: HistogramSeries }>>>();

  function observeRequest(method: string, route: string, status: number, seconds: number): void {
    // By its label, not as the caller names it: the map stays as bounded as the labels.
    const label = methodLabel(method);
    let byRoute = series.get(label);
    if (byRoute === undefined) series.set(label, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (found === undefined) {
      const labels = [label, route, String(status)];
      found = { count: requests.series(...labels), duration: requestDuration.series(...labels) };
      byStatus.set(status, found);
    }
    found.count.inc();
    found.duration.observe(seconds);
  }

  let scrapes = 0;
  async function write(accept: string | undefined, res: ServerResponse, head: boolean): Promise<void> {
    scrapes++;
    // Always the Prometheus text format 0.0.4, which every Prometheus accepts: prom-client renames
    // counters (drops `_total`) for good once a registry has rendered OpenMetrics.
    void accept;
    const body = await registry.metrics();
    res.statusCode = 200;
    res.setHeader('Content-Type', registry.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(head ? undefined : body);
  }

  return {
    registry,
    observeRequest,
    start() {
      if (started) return;
      started = true;
      if (options.processMetrics ?? true) {
        collectDefaultMetrics({ register: registry });
        // prom-client also writes each of these totals as a gauge named `…_total`, a suffix that
        // Prometheus reserves for counters (`promtool check metrics` flags them). The same figures
        // are the sums of the by-type gauges it keeps (`sum(nodejs_active_handles)`).
        for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
      }
    },
    counter: (config) => new Counter({ ...config, registers: [registry] }),
    gauge: (config) => new Gauge({ ...config, registers: [registry] }),
    readCounter: (name, help, read) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      }),
    histogram: (config) => new Histogram({ ...config, registers: [registry] }),
    seriesCounter: (config) => seriesCounter(registry, config),
    seriesHistogram: (config) => seriesHistogram(registry, config),
    perScrape<T>(read: () => T) {
      let at = -1;
      let value: T;
      return () => {
        if (at !== scrapes) {
          value = read();
          at = scrapes;
        }
        return value;
      };
    },
    middleware() {
      return function requestMetrics(req, res, next) {
        const start = process.hrtime.bigint();
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          const seconds = Number(process.hrtime.bigint() - start) / 1e9;
          observeRequest(
            req.method,
            expressRoute(req, res.locals as Record<string, unknown>),
            res.headersSent ? res.statusCode : 0,
            seconds,
          );
        };
        res.once('finish', finish);
        res.once('close', finish);
        next();
      };
    },
    handler() {
      return function metricsHandler(req, res, next) {
        write(req.headers.accept, res, req.method === 'HEAD').catch(next);
      };
    },
    serve(req, res) {
      return write(req.headers.accept, res, req.method === 'HEAD');
    },
  };
}

/** OpenAPI 3.1 operation of `GET /metrics` (docs/README.md, "Metrics"), for the apps' API documents. */
export function metricsOperation(operationId = 'metrics'): Record<string, unknown> {
  return {
    operationId,
    summary: 'Prometheus metrics (text format 0.0.4)',
    description:
      'Request counts and durations by route pattern and status, process metrics and the service\'s own (its README, "Operations").',
    // Open to every client, as Prometheus scrapes it: no credentials (docs/README.md, "Metrics").
    security: [],
    responses: {
      '200': { description: 'The Prometheus text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
    },
  };
}

/** OpenAPI 3.1 operation of `GET /ready` (docs/README.md, "Health and readiness"). */
export function readyOperation(operationId = 'ready', reasons: string[] = []): Record<string, unknown> {
  return {
    operationId,
    summary: 'Readiness: 200 when the service can do its work, 503 with the reason while a dependency it needs is missing',
    security: [],
    responses: {
      '200': {
        description: 'Ready.',
        content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'ready' } } } } },
      },
      '503': {
        description: 'Not ready.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['status', 'reason', 'message'],
              properties: {
                status: { const: 'unready' },
                reason: reasons.length > 0 ? { type: 'string', enum: reasons } : { type: 'string' },
                message: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
}
