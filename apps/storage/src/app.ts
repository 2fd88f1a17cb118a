import { createServer, type Server } from 'node:http';
import express, { type Express } from 'express';
import { documentHandler } from '@repo/api-contract';
import { errorHandler, notFoundHandler } from '@repo/errors';
import { closeServers, once, type Logger, type ServiceApp } from '@repo/service';
import {
  answerProtocolErrors,
  createRateLimiter,
  jsonBody,
  limitConnectionsPerAddress,
  overloadGuard,
  rateLimit,
  requestId,
  requestLogger,
  requestTimeout,
  type ConnectionCounter,
} from '@repo/http';
import type { ServiceMetrics } from '@repo/metrics';
import type { StorageBackend } from './backends/backend';
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
  /** A backend built by the caller, instead of the one `config.backend` names. */
  backend?: StorageBackend;
}

/**
 * The storage service, built but not listening: `start()` starts the sweeper; `close()` stops it,
 * closes the server gracefully and then the backend (pending writes finish).
 */
export interface StorageApp extends ServiceApp<{ http: Server }> {
  app: Express;
  backend: StorageBackend;
  sweeper: Sweeper;
  connections: ConnectionCounter;
  metrics: ServiceMetrics;
}

/** Builds the backend `config.backend` names. Rejects when Redis cannot be reached. */
export async function createBackend(config: StorageConfig, logger: Logger): Promise<StorageBackend> {
  if (config.backend === 'redis') {
    return createRedisBackend({
      url: config.redisUrl,
      keyPrefix: config.redisKeyPrefix,
      connectTimeoutMs: config.redisConnectTimeoutMs,
      logger,
    });
  }
  return createSqliteBackend({ file: config.sqliteFile });
}

/**
 * Builds the storage service (express app, HTTP server with its connection caps, backend, the
 * sweeper not started) without listening. Rejects when the backend cannot be opened.
 */
export async function createApp(config: StorageConfig, deps: StorageDeps): Promise<StorageApp> {
  const { logger } = deps;
  const now = deps.now ?? Date.now;
  const instrumented = createStorageMetrics(deps.backend ?? (await createBackend(config, logger)), now);
  const { backend, metrics } = instrumented;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip is the client behind a trusted proxy (docs/README.md, "Trusted proxies").
  app.set('trust proxy', config.trustProxy);
  app.use(requestId(config.trustProxy));
  app.use(requestLogger(logger));
  app.use(metrics.middleware());
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
  app.use(errorHandler({ logger }));

  const server = createServer(app);
  const connections = limitConnectionsPerAddress(server, {
    maxPerAddress: config.maxConnectionsPerIp,
    maxTotal: config.maxConnections,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    logger,
  });
  answerProtocolErrors(server);

  const sweeper = createSweeper({ backend, now, intervalMs: config.sweepIntervalMs, batchSize: config.sweepBatchSize, logger });
  const servers = { http: server };
  return {
    app,
    servers,
    backend,
    sweeper,
    connections,
    metrics,
    start() {
      logger.info({ backend: config.backend, permanent: config.permanent, dataDir: config.dataDir }, 'storage starting');
      sweeper.start();
      return Promise.resolve();
    },
    close: once(async () => {
      await sweeper.stop();
      await closeServers(servers);
      await backend.close();
    }),
  };
}
