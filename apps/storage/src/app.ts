import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { documentHandler } from '@repo/api-contract';
import { errorHandler, notFoundHandler } from '@repo/errors';
import { closeServers, once, type Logger, type ServiceApp } from '@repo/service';
import { createRateLimiter, jsonBody, guardServer, overloadGuard, rateLimit, requestTimeout, type ConnectionCounter } from '@repo/http';
import { createExpressApp, serveExpress } from '@repo/http/express';
import type { ServiceMetrics } from '@repo/metrics';
import type { StorageBackend } from './backends/backend';
import { deferBackend } from './backends/deferred';
import { createRedisBackend } from './backends/redis';
import { createSqliteBackend } from './backends/sqlite';
import type { StorageConfig } from './config';
import { createStorageMetrics } from './metrics';
import { OPENAPI } from './openapi';
import { createHealthRouter } from './routes/health';
import { createStorageRouter } from './routes/storage';
import { createSweeper, type Sweeper } from './sweeper';

/** What {@link createApp} needs besides the config. */
export interface StorageDeps {
  logger: Logger;
  /** Clock in ms since the epoch (default `Date.now`); tests drive TTLs with it. */
  now?: () => number;
  /** A backend the caller built and opened, used instead of the one `config.backend` names (which `start()` opens). */
  backend?: StorageBackend;
}

/**
 * The storage service, built but not listening: `start()` opens the backend (the SQLite file, the
 * Redis connection) and starts the sweeper; `close()` stops it, closes the server gracefully and
 * then the backend (pending writes finish).
 */
export interface StorageApp extends ServiceApp<{ http: Server }> {
  app: Express;
  backend: StorageBackend;
  sweeper: Sweeper;
  connections: ConnectionCounter;
  metrics: ServiceMetrics;
}

/** Opens the backend `config.backend` names. Rejects when the SQLite file cannot be opened or Redis cannot be reached. */
export async function createBackend(config: StorageConfig, logger: Logger): Promise<StorageBackend> {
  if (config.backend === 'redis') {
    return createRedisBackend({
      url: config.redisUrl,
      keyPrefix: config.redisKeyPrefix,
      connectTimeoutMs: config.redisConnectTimeoutMs,
      commandTimeoutMs: config.redisCommandTimeoutMs,
      logger,
    });
  }
  return createSqliteBackend({ file: config.sqliteFile, logger });
}

/**
 * Builds the storage service (express app, HTTP server with its connection caps, the backend and
 * the sweeper) without listening, opening or writing anything. `start()` opens the backend (it
 * rejects when the SQLite file cannot be opened or Redis cannot be reached) and starts the
 * sweeper. A `deps.backend` is used as given: its caller opened it.
 */
export function createApp(config: StorageConfig, deps: StorageDeps): StorageApp {
  const { logger } = deps;
  const now = deps.now ?? Date.now;
  const deferred =
    deps.backend === undefined ? deferBackend(config.backend, config.backend === 'sqlite', () => createBackend(config, logger)) : undefined;
  const instrumented = createStorageMetrics(deps.backend ?? deferred!, now);
  const { backend, metrics } = instrumented;

  const app = createExpressApp({ trustProxy: config.trustProxy, logger, etag: false, use: [metrics.middleware()] });
  app.use(overloadGuard(config.maxInFlight));
  app.use(requestTimeout(config.requestTimeoutMs));
  // Health stays outside the rate limit: probes must not be refused nor eat the allowance.
  app.use(createHealthRouter({ backend, permanent: config.permanent }));
  app.get('/metrics', metrics.handler());
  // The API document (docs/storage.md, "API document"), outside the rate limit as health is.
  app.get(['/openapi.json', '/storage/openapi.json'], documentHandler(OPENAPI));
  if (config.rateLimitPerMinute > 0 || config.rateLimitPerSecond > 0) {
    app.use(rateLimit(createRateLimiter({ perMinute: config.rateLimitPerMinute, perSecond: config.rateLimitPerSecond })));
  }
  // Bounded parsing (docs/storage.md, "Limits"): 413 at once past MAX_BODY_BYTES, 400 past the
  // nesting bound, 503 past MAX_CONCURRENT_BODIES. A JSON string or number goes through to the
  // validator, whose message is clearer.
  app.use(jsonBody({ limitBytes: config.maxBodyBytes, maxConcurrent: config.maxConcurrentBodies }));
  app.use(
    createStorageRouter({
      backend,
      now,
      permanent: config.permanent,
      defaultTtlSeconds: config.defaultTtlSeconds,
      maxTtlSeconds: config.maxTtlSeconds,
    }),
  );
  app.use(notFoundHandler());
  // Unexpected errors with their stack; the 503s of an outage or overload, one line now and then.
  app.use(errorHandler({ logger }));

  const server = createServer(serveExpress(app, logger));
  const connections = guardServer(server, config, { logger });

  const sweeper = createSweeper({ backend, now, intervalMs: config.sweepIntervalMs, batchSize: config.sweepBatchSize, logger });
  const servers = { http: server };
  return {
    app,
    servers,
    backend,
    sweeper,
    connections,
    metrics,
    async start() {
      metrics.start();
      await deferred?.open();
      logger.info({ backend: config.backend, permanent: config.permanent, dataDir: config.dataDir }, 'storage starting');
      sweeper.start();
    },
    close: once(async () => {
      await sweeper.stop();
      await closeServers(servers);
      await backend.close();
    }),
  };
}
