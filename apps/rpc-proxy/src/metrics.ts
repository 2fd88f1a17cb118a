import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMetrics, UNMATCHED_ROUTE, type ServiceMetrics } from '@repo/metrics';
import type { Authenticator } from './auth';
import type { ResultCache } from './cache';
import type { Coalescer } from './coalesce';
import type { NodeClient, NodeFailure } from './node-client';

/** Seconds buckets of a node round trip: 1 ms (a cached header) to 30 s (a large block under load). */
const NODE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The proxy's metrics (README, "Operations"), the node client's observer and the authenticator wrapped to feed them. */
export interface ProxyMetrics {
  metrics: ServiceMetrics;
  /** Give it to the node client (NodeClientOptions.observe): every call of it is timed and counted. */
  observeNode: (seconds: number, failure: NodeFailure | undefined) => void;
  auth: Authenticator;
  /** Records the request when its response ends (call first thing in the server's handler). */
  track(req: IncomingMessage, res: ServerResponse): void;
  /** Records a request its handler saw to the end (status 0: the client left before the answer). */
  record(req: { readonly method?: string | undefined; readonly url?: string | undefined }, status: number, seconds: number): void;
}

/** The route pattern of a request path: bounded label values, never the raw path. */
export function proxyRoute(url: string | undefined): string {
  if (url === '/') return url;
  const path = (url ?? '/').split('?', 1)[0] as string;
  if (path === '/' || path === '/health' || path === '/ready' || path === '/metrics') return path;
  if (path.startsWith('/wallet/')) return '/wallet/:name';
  return UNMATCHED_ROUTE;
}

/**
 * `rpc_proxy_node_request_duration_seconds` and `rpc_proxy_node_requests_total{outcome}` (every call
 * of the node client, long polls aside, from its arrival: ok, or the NodeError kind), `rpc_proxy_cache_hits_total` /
 * `_misses_total` / `rpc_proxy_cache_bytes`, `rpc_proxy_coalesced_total` (calls answered by another
 * call's flight instead of the node) and `rpc_proxy_coalesce_flights_total`,
 * `rpc_proxy_auth_failures_total{reason}` (missing, invalid), `rpc_proxy_node_queue` (calls waiting
 * for the node: queued for a connection or held behind their path's batch).
 */
export function createProxyMetrics(deps: {
  /** The node client (read at each scrape: it is made after the metrics, which observe it). */
  node: () => NodeClient;
  auth: Authenticator;
  cache: ResultCache;
  coalescer: Coalescer;
}): ProxyMetrics {
  const metrics = createMetrics({ service: 'rpc-proxy' });
  // Series kept by the caller (@repo/metrics seriesHistogram, seriesCounter): every node call is timed and counted.
  const nodeLatency = metrics
    .seriesHistogram({
      name: 'rpc_proxy_node_request_duration_seconds',
      help: 'Time of each call to the node, from its arrival (a call gathered into a batch: until its answer).',
      labelNames: [],
      buckets: NODE_BUCKETS,
    })
    .series();
  const nodeRequests = metrics.seriesCounter({
    name: 'rpc_proxy_node_requests_total',
    help: 'Calls to the node (each call of a batch counted), by outcome (ok, or the failure: unreachable, timeout, busy, garbage, queue, ...).',
    labelNames: ['outcome'],
  });
  const ok = nodeRequests.series('ok');
  const authFailures = metrics.counter({
    name: 'rpc_proxy_auth_failures_total',
    help: 'Requests refused 401, by reason (missing: no credentials; invalid: wrong ones).',
    labelNames: ['reason'] as const,
  });
  // Counters kept by the cache and the coalescer, read at each scrape.
  const fromStats = metrics.readCounter;
  fromStats('rpc_proxy_cache_hits_total', 'Calls answered from the result cache of immutable answers.', () => deps.cache.hits);
  fromStats('rpc_proxy_cache_misses_total', 'Cacheable calls the cache could not answer.', () => deps.cache.misses);
  fromStats(
    'rpc_proxy_coalesced_total',
    'Calls that joined an identical call in flight instead of going to the node.',
    () => deps.coalescer.stats.followers,
  );
  fromStats(
    'rpc_proxy_coalesce_flights_total',
    'Calls sent to the node on behalf of a possible group.',
    () => deps.coalescer.stats.flights,
  );
  metrics.gauge({
    name: 'rpc_proxy_cache_bytes',
    help: 'Bytes held by the result cache.',
    collect() {
      this.set(deps.cache.bytes);
    },
  });
  metrics.gauge({
    name: 'rpc_proxy_node_queue',
    help: "Calls waiting for the node: queued for a connection or held behind their path's batch (NODE_QUEUE_LIMIT bounds them).",
    collect() {
      const { stats } = deps.node();
      this.set(stats.queued + stats.held);
    },
  });

  /** Each node call once ended (NodeClientOptions.observe): timed from its arrival, counted by outcome. */
  const observeNode = (seconds: number, failure: NodeFailure | undefined): void => {
    nodeLatency.observe(seconds);
    (failure === undefined ? ok : nodeRequests.series(failure)).inc();
  };
  const auth: Authenticator = {
    ...deps.auth,
    check(header) {
      const result = deps.auth.check(header);
      if (!result.ok) authFailures.inc({ reason: result.reason });
      return result;
    },
  };

  return {
    metrics,
    observeNode,
    auth,
    track(req, res) {
      const start = process.hrtime.bigint();
      res.once('close', () => {
        metrics.observeRequest(
          req.method ?? 'GET',
          proxyRoute(req.url),
          res.headersSent ? res.statusCode : 0,
          Number(process.hrtime.bigint() - start) / 1e9,
        );
      });
    },
    record(req, status, seconds) {
      metrics.observeRequest(req.method ?? 'GET', proxyRoute(req.url), status, seconds);
    },
  };
}
