import { createServer, type Server } from 'node:https';
import express, { type Express, type RequestHandler } from 'express';
import { AppError, errorHandler, notFoundHandler } from '@repo/errors';
import {
  chain,
  closeGracefully,
  createRateLimiter,
  limitConnectionsPerAddress,
  overloadGuard,
  rateLimit,
  requestLogger,
  requestTimeout,
  type ConnectionCounter,
  type Logger,
} from '@repo/http';
import type { ConfigServerConfig } from './config';
import { API_VERSION, COMMON_HEADERS } from './constants';
import { createClientKeyRegistry } from './client-keys';
import { createFileStore } from './file-store';
import type { Keyring } from './keyring';
import { maintenanceSwitch } from './maintenance';
import { fileRoute } from './routes/files';
import { metaRoutes } from './routes/meta';

/** What the app needs besides its configuration. */
export interface ConfigServerDeps {
  logger: Logger;
  keyring: Keyring;
  /** PEM certificate and key: plain HTTP is never served. */
  tls: { cert: string; key: string };
  now?: () => number;
}

/** The config server, built but not listening. */
export interface ConfigServerApp {
  app: Express;
  server: Server;
  connections: ConnectionCounter;
  close(): Promise<void>;
}

/** Builds the config server (HTTPS only) from its configuration; never listens. */
export function createApp(config: ConfigServerConfig, deps: ConfigServerDeps): ConfigServerApp {
  const { logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // The guards every request passes, in one router layer (see `chain`).
  app.use(
    chain(
      requestLogger(logger),
      commonHeaders(),
      rateLimit(createRateLimiter({ perMinute: config.rateLimitPerMinute, perSecond: config.rateLimitPerSecond, now: deps.now })),
      maintenanceSwitch({ enabled: config.maintenance, dataDir: config.dataDir, now: deps.now }),
      overloadGuard(config.maxInFlight),
      requestTimeout(config.requestTimeoutMs),
      requestChecks(config.maxRequestBytes),
    ),
  );
  app.use(metaRoutes({ storageDir: config.storageDir, domain: config.domain, port: config.port }));
  app.use(
    fileRoute({
      store: createFileStore({
        storageDir: config.storageDir,
        maxFileBytes: config.maxFileBytes,
        cacheMs: config.fileCacheMs,
        logger,
        now: deps.now,
      }),
      keyring: deps.keyring,
      clientKeys: createClientKeyRegistry({ dir: config.clientKeysDir, recheckMs: config.clientKeysRecheckMs, logger, now: deps.now }),
      logger,
    }),
  );
  app.use(notFoundHandler({ code: 'FILE_NOT_FOUND' }));
  app.use(errorHandler({ logger }));

  const server = createServer({ cert: deps.tls.cert, key: deps.tls.key, minVersion: 'TLSv1.2' }, app);
  // Node's own limits backstop the middleware: headers and whole requests within the timeout.
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = Math.min(config.requestTimeoutMs, 60_000);
  server.keepAliveTimeout = 5_000;
  const connections = limitConnectionsPerAddress(server, { maxPerAddress: config.maxConnectionsPerIp, logger });

  return {
    app,
    server,
    connections,
    close: () => closeGracefully(server),
  };
}

function commonHeaders(): RequestHandler {
  return function commonHeaders(_req, res, next) {
    for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value);
    next();
  };
}

/**
 * No endpoint takes a body: one over the request limit is 413 (docs/config-server.md, "Limits": 1 MB per
 * request), and a client asking for another major API version is told which one is served.
 */
function requestChecks(maxRequestBytes: number): RequestHandler {
  const major = API_VERSION.split('.')[0];
  return function requestChecks(req, _res, next) {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > maxRequestBytes) {
      next(new AppError('PAYLOAD_TOO_LARGE', { details: `requests are limited to ${maxRequestBytes} bytes` }));
      return;
    }
    const wanted = req.headers['api-version'];
    if (typeof wanted === 'string' && wanted.split('.')[0] !== major) {
      next(new AppError('INVALID_PARAMETER', { message: 'unsupported API version', details: `supported: ${API_VERSION}` }));
      return;
    }
    next();
  };
}
