import { createMetrics, type ServiceMetrics } from '@repo/metrics';
import type { EndHook } from './request-scope';
import type { WatchHub } from './watch';

/** What a file answer tells the metrics: set on `res.locals.configFetch` by the file route. */
export interface ConfigFetch {
  environment: string;
  /** `psk`, `hpke-x25519` or `hpke-xwing` (the answer's `X-Encryption-Mode`). */
  mode: string;
}

/** The config server's metrics (README, "Operations"). */
export interface ConfigServerMetrics {
  metrics: ServiceMetrics;
  /** Counts `config_fetches_total` when a file answer (200 or 304) ends. */
  countFetch: EndHook;
}

/**
 * `config_fetches_total{environment,mode,result}` (result `served` for 200, `not_modified` for
 * 304; only environments that exist become label values: a 404 is counted by route alone), and
 * the change watch's `config_watch_waiting_requests` and `config_watch_files`.
 */
export function createConfigServerMetrics(watch: WatchHub): ConfigServerMetrics {
  const metrics = createMetrics({ service: 'config-server' });
  const fetches = metrics.counter({
    name: 'config_fetches_total',
    help: 'Configuration files answered, by environment, encryption mode and result (served: 200, not_modified: 304).',
    labelNames: ['environment', 'mode', 'result'] as const,
  });
  metrics.gauge({
    name: 'config_watch_waiting_requests',
    help: 'Requests parked on ?wait= for a change.',
    collect() {
      this.set(watch.stats.waiting);
    },
  });
  metrics.gauge({
    name: 'config_watch_files',
    help: 'Files watched for changes on behalf of waiting requests.',
    collect() {
      this.set(watch.stats.files);
    },
  });
  return {
    metrics,
    countFetch(_req, res, status) {
      const fetch = res.locals.configFetch as ConfigFetch | undefined;
      if (fetch === undefined || !res.writableFinished || (status !== 200 && status !== 304)) return;
      fetches.inc({ environment: fetch.environment, mode: fetch.mode, result: status === 200 ? 'served' : 'not_modified' });
    },
  };
}
