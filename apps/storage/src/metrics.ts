import { createMetrics, type ServiceMetrics } from '@repo/metrics';
import type { StorageBackend } from './backends/backend';

/** Seconds buckets of a durable commit: 50 µs to 1 s (SQLite in WAL mode with fsync, or a Redis round trip). */
const COMMIT_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** The storage service's metrics (README, "Operations") and the backend wrapped to feed them. */
export interface StorageMetrics {
  metrics: ServiceMetrics;
  /** `backend` with every write timed and counted and every sweep's deletions counted. */
  backend: StorageBackend;
}

/**
 * `storage_writes_total{operation,result}`, `storage_commit_duration_seconds` (from the call to the
 * backend to its durable answer: a store, delete or touch), `storage_expired_total` (values the
 * sweeper deleted; the Redis backend's values expire inside Redis and are not counted), and
 * `storage_keys` (live values, read on each scrape; the SQLite backend only).
 */
export function createStorageMetrics(backend: StorageBackend, now: () => number): StorageMetrics {
  const metrics = createMetrics({ service: 'storage' });
  const writes = metrics.counter({
    name: 'storage_writes_total',
    help: 'Writes by operation (store, delete, touch) and result (stored, exists, deleted, touched, not_found, no_token, forbidden, error).',
    labelNames: ['operation', 'result'] as const,
  });
  const commit = metrics.histogram({
    name: 'storage_commit_duration_seconds',
    help: 'Time from a write to the backend to its durable answer (store, delete, touch).',
    buckets: COMMIT_BUCKETS,
  });
  const expired = metrics.counter({ name: 'storage_expired_total', help: 'Expired values the sweeper deleted (SQLite backend).' });
  const count = backend.count?.bind(backend);
  if (count !== undefined) {
    metrics.gauge({
      name: 'storage_keys',
      help: 'Values stored and not expired, read at each scrape (SQLite backend).',
      async collect() {
        this.set(await count(now()));
      },
    });
  }

  async function timed<T>(operation: string, run: () => Promise<T>, result: (value: T) => string): Promise<T> {
    const end = commit.startTimer();
    try {
      const value = await run();
      end();
      writes.inc({ operation, result: result(value) });
      return value;
    } catch (err) {
      writes.inc({ operation, result: 'error' });
      throw err;
    }
  }

  const instrumented: StorageBackend = {
    get name() {
      return backend.name;
    },
    get: (key, at) => backend.get(key, at),
    put: (key, value, ttl, at, tokenHash) =>
      timed(
        'store',
        () => backend.put(key, value, ttl, at, tokenHash),
        (r) => r,
      ),
    delete: (key, tokenHash, at) =>
      timed(
        'delete',
        () => backend.delete(key, tokenHash, at),
        (r) => r,
      ),
    touch: (key, tokenHash, ttl, at) =>
      timed(
        'touch',
        () => backend.touch(key, tokenHash, ttl, at),
        (r) => (typeof r === 'string' ? r : 'touched'),
      ),
    async sweep(at, batch) {
      const deleted = await backend.sweep(at, batch);
      expired.inc(deleted);
      return deleted;
    },
    ping: () => backend.ping(),
    close: () => backend.close(),
    ...(count !== undefined && { count }),
  };
  return { metrics, backend: instrumented };
}
