import { access, constants, stat } from 'node:fs/promises';
import { Router } from 'express';
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

/** What `/ready` checks. */
export interface ReadyRouterDeps {
  storageDir: string;
  keysDir: string;
  /** Whether `start()` has loaded the keys and the certificate. */
  started: () => boolean;
}

/** Why the server is not ready, or undefined. */
export async function unreadyReason(options: ReadyRouterDeps): Promise<{ reason: string; message: string } | undefined> {
  if (!options.started()) return { reason: 'starting', message: 'keys and certificate not loaded yet' };
  try {
    await access(options.storageDir, constants.R_OK | constants.X_OK);
  } catch (err) {
    return { reason: 'storage-unavailable', message: `STORAGE_DIR cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}` };
  }
  // The keys folder is optional (keys are derived from the master key unless a key file overrides one).
  const keys = await stat(options.keysDir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : err));
  if (keys instanceof Error) return { reason: 'keys-unavailable', message: `KEYS_DIR cannot be read: ${keys.code ?? 'error'}` };
  if (keys !== undefined) {
    try {
      await access(options.keysDir, constants.R_OK | constants.X_OK);
    } catch (err) {
      return { reason: 'keys-unavailable', message: `KEYS_DIR cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}` };
    }
  }
  return undefined;
}

/**
 * `GET /ready` (docs/README.md, "Operations"): 200 `{status: "ready"}` once the keys and the
 * certificate are loaded and the storage and keys folders can be read; 503
 * `{status: "unready", reason, message}` otherwise (reasons: `starting`, `storage-unavailable`,
 * `keys-unavailable`).
 */
export function createReadyRouter(options: ReadyRouterDeps): Router {
  const router = Router();
  router.get('/ready', async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const unready = await unreadyReason(options);
    if (unready === undefined) res.json({ status: 'ready' });
    else res.status(503).json({ status: 'unready', ...unready });
  });
  return router;
}
