import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { documentHandler } from '@repo/api-contract';
import { AppError, errorHandler, notFoundHandler, toAppError, toErrorRecord } from '@repo/errors';
import {
  closeGracefully,
  loadOrCreateTlsCredentials,
  once,
  throttledLog,
  watchCertificate,
  type CertificateWatch,
  type Logger,
  type ServiceApp,
} from '@repo/service';
import { answerOnSocket, chain, createRateLimiter, guardServer, rateLimit, requestLogger, type ConnectionCounter } from '@repo/http';
import { serveExpress } from '@repo/http/express';
import { auditTrail, createAuditLog, type AuditFields } from './audit';
import type { ConfigServerConfig } from './config';
import { API_VERSION, COMMON_HEADERS } from './constants';
import { createClientKeyRegistry } from './client-keys';
import { createFileStore } from './file-store';
import { createKeyring, type Keyring } from './keyring';
import { maintenanceSwitch } from './maintenance';
import { createFileRouter } from './routes/files';
import { createRequestScope } from './request-scope';
import { OPENAPI } from './openapi';
import { createHealthRouter } from './routes/health';
import { createInfoRouter } from './routes/info';
import { createConfigServerMetrics } from './metrics';
import type { ServiceMetrics } from '@repo/metrics';
import { masterKeySource, persistKey, readOrCreateKey, versionKeySource, type PendingKey } from './keys';
import { createVersionStore } from './versions';
import { createWatchHub, type WatchHub } from './watch';

/**
 * TLS 1.2 and 1.3 only; TLS 1.2 restricted to forward-secret AEAD suites (ECDHE with AES-GCM or
 * ChaCha20-Poly1305, RFC 5289 and RFC 7905): no CBC-SHA suite is offered. TLS 1.3 suites (RFC 8446,
 * all AEAD) stay Node's defaults: no `TLS_` name is listed, so Node leaves them as they are.
 */
export const TLS12_AEAD_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');
const TLS_POLICY = { minVersion: 'TLSv1.2', ciphers: TLS12_AEAD_CIPHERS, honorCipherOrder: true } as const;

/** What the app needs besides its configuration. */
export interface ConfigServerDeps {
  logger: Logger;
  /** By default from `CONFIG_MASTER_KEY` or `DATA_DIR/master.key` (written by `start()` on first start). */
  keyring?: Keyring;
  /**
   * PEM certificate and key: plain HTTP is never served. By default TLS_CERT_FILE/TLS_KEY_FILE, or
   * a self-signed certificate in DATA_DIR, loaded (or generated) by `start()`.
   */
  tls?: { cert: string; key: string };
  /** The key versions are computed under; by default `CONFIG_VERSION_KEY` or `DATA_DIR/version.key` (written by `start()` on first start). */
  versionKey?: Uint8Array;
  now?: () => number;
}

/**
 * The HTTPS listeners: `https` on `PORT`, and `httpsAlt` on `HTTPS_ALT_PORT` when it is set (the
 * same app, TLS, limits and headers, on a port `fetch` and browsers accept: README, "A second port for `fetch` and browsers").
 */
export type ConfigServerServers = { https: Server; httpsAlt?: Server };

/**
 * The config server, built but not listening: `start()` writes the keys generated on first start,
 * opens the audit log and loads (or generates) the TLS certificate; `close()` (idempotent, and
 * harmless before `start()`) stops listening, answers every waiting request (304,
 * `Connection: close`) and lets the others finish.
 */
export interface ConfigServerApp extends ServiceApp<ConfigServerServers> {
  app: Express;
  /** The connections of the main listener (`PORT`). */
  connections: ConnectionCounter;
  /** The change watch of `?wait=` requests (its `stats`, for tests and benchmarks). */
  watch: WatchHub;
  metrics: ServiceMetrics;
}

/** Builds the config server (HTTPS only) from its configuration; never listens, writes no file. */
export function createApp(config: ConfigServerConfig, deps: ConfigServerDeps): ConfigServerApp {
  const { logger } = deps;
  // Read (or generated) in memory here; a generated key is written by start().
  const master = deps.keyring === undefined ? readOrCreateKey(masterKeySource(config)) : undefined;
  const keyring = deps.keyring ?? createKeyring({ keysDir: config.keysDir, masterKey: master!.key });
  const version = deps.versionKey === undefined ? readOrCreateKey(versionKeySource(config)) : undefined;
  const ownKeys = [master, version].filter((k): k is PendingKey => k !== undefined);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip is the client behind a trusted proxy (docs/README.md, "Trusted proxies").
  app.set('trust proxy', config.trustProxy);
  let started = false;
  let certificateWatch: CertificateWatch | undefined;

  const store = createFileStore({
    storageDir: config.storageDir,
    maxFileBytes: config.maxFileBytes,
    cacheMs: config.fileCacheMs,
    logger,
    now: deps.now,
  });
  const versions = createVersionStore({
    secret: deps.versionKey ?? version!.key,
    dir: join(config.dataDir, 'history'),
    maxPerFile: config.versionHistoryMax,
    logger,
  });
  const watch = createWatchHub({
    storageDir: config.storageDir,
    render: async (request) => {
      const file = await store.render(request, { fresh: true });
      return { file, version: versions.versionOf(request.env, request.file, file.content) };
    },
    pollMs: config.watchPollMs,
    maxWaiting: config.maxWaiting,
    logger,
  });
  const audit = createAuditLog({ path: config.auditLogFile, maxBytes: config.auditLogMaxBytes, keep: config.auditLogKeep, logger });
  const maxWaitSeconds = Math.floor(config.requestTimeoutMs / 1000);
  const { metrics, countFetch } = createConfigServerMetrics(watch);

  const clientKeys = createClientKeyRegistry({ dir: config.clientKeysDir, recheckMs: config.clientKeysRecheckMs, logger, now: deps.now });
  const trail = auditTrail(audit, deps.now);
  const scope = createRequestScope({
    trustProxy: config.trustProxy,
    logger,
    metrics,
    maxInFlight: config.maxInFlight,
    requestTimeoutMs: config.requestTimeoutMs,
    maxWaitSeconds,
    onEnd: [countFetch, trail.end],
  });

  // The API document (docs/config-server.md, "API document"): before the guards, so it is not
  // rate-limited; it carries the common headers as every answer does.
  app.get('/openapi.json', requestLogger(logger), commonHeaders(), documentHandler(OPENAPI));
  // The guards every request passes and the file route, in one router layer (see `chain`): a file
  // request, the one asked for most, is answered there without passing the other routes (all
  // of them one path segment, which is never a file request).
  const guarded = chain(
    scope.begin,
    trail.mark,
    commonHeaders(),
    rateLimit(createRateLimiter({ perMinute: config.rateLimitPerMinute, perSecond: config.rateLimitPerSecond, now: deps.now })),
    maintenanceSwitch({ enabled: config.maintenance, dataDir: config.dataDir, now: deps.now }),
    scope.admit,
    requestChecks(config.maxRequestBytes),
    createFileRouter({ store, versions, watch, maxWaitSeconds, keyring, clientKeys, logger }),
  );
  app.use(guarded);
  app.use(createHealthRouter({ storageDir: config.storageDir, keysDir: config.keysDir, started: () => started }));
  app.use(createInfoRouter({ domain: config.domain, port: config.port }));
  app.get('/metrics', metrics.handler());
  app.use(notFoundHandler({ code: 'FILE_NOT_FOUND' }));
  app.use(auditErrorCode(), errorHandler({ logger }));

  const main = createHttpsListener(app, config, deps);
  const alt = config.httpsAltPort === undefined ? undefined : createHttpsListener(app, config, deps);
  const servers: ConfigServerServers = { https: main.server, ...(alt && { httpsAlt: alt.server }) };
  const listeners = alt === undefined ? [main.server] : [main.server, alt.server];

  return {
    app,
    servers,
    connections: main.connections,
    watch,
    metrics,
    async start() {
      metrics.start();
      for (const key of ownKeys) persistKey(key, logger);
      audit.open();
      if (deps.tls === undefined) {
        // An operator pair that does not load (or that OpenSSL refuses with the policy) stops the start naming the variable at fault.
        const tls = await loadOrCreateTlsCredentials({
          certFile: config.tlsCertFile,
          keyFile: config.tlsKeyFile,
          dataDir: config.dataDir,
          context: TLS_POLICY,
        });
        for (const server of listeners) server.setSecureContext({ cert: tls.cert, key: tls.key, ...TLS_POLICY });
        logger.info({ source: tls.source, sha256: tls.fingerprint }, 'TLS certificate loaded (pin this fingerprint in clients)');
        // Operator files are reloaded on SIGHUP and when they change, without a restart (README, "Operations").
        if (tls.source === 'files' && config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined) {
          certificateWatch = watchCertificate({
            certFile: config.tlsCertFile,
            keyFile: config.tlsKeyFile,
            servers: listeners,
            logger,
            // The whole policy again: a reload replaces the secure context, ciphers included.
            context: TLS_POLICY,
          });
        }
      }
      logger.info(
        {
          storage: config.storageDir,
          audit: config.auditLogFile,
          auditMaxBytes: config.auditLogMaxBytes,
          auditKeep: config.auditLogKeep,
          historyPerFile: config.versionHistoryMax,
        },
        'config server starting',
      );
      started = true;
    },
    close: once(async () => {
      certificateWatch?.close();
      const closing = Promise.all(listeners.map((server) => closeGracefully(server)));
      watch.close();
      await closing;
      await versions.close(); // a handler that outlived its answer (a 408) may still be writing one
      audit.close();
    }),
  };
}

/**
 * One HTTPS listener of the app: the TLS policy, the handshake deadline, Node's limits and the
 * per-address connection caps (`guardServer`), and the refusals express never sees (a request
 * without `Host`, `CONNECT`, an `Expect` other than 100-continue), each with the error record and
 * the common headers. Each listener counts its own connections against the same caps.
 */
function createHttpsListener(
  app: Express,
  config: ConfigServerConfig,
  deps: ConfigServerDeps,
): { server: Server; connections: ConnectionCounter } {
  const { logger } = deps;
  const server = createServer(
    {
      ...(deps.tls ? { cert: deps.tls.cert, key: deps.tls.key } : {}),
      ...TLS_POLICY,
      // A client that opens a connection and never finishes the handshake loses it.
      handshakeTimeout: config.headersTimeoutMs,
      requireHostHeader: false,
    },
    // An HTTP/1.1 request without `Host` is refused here, with the error record and the common headers
    // (Node's own check answers a bare 400 with no body: requireHostHeader is off for that reason).
    refuseMissingHost(serveExpress(app, logger), logger),
  );
  server.keepAliveTimeout = 5_000;
  // Node's own limits backstop the middleware: headers and whole requests within their deadlines;
  // one address cannot take every slot (a reserve is kept for new addresses); protocol errors get
  // the error record and the common headers, as every response (docs/config-server.md, "Limits",
  // "Response headers").
  const connections = guardServer(server, config, { logger, headers: COMMON_HEADERS });
  // CONNECT never reaches express (Node emits `connect`, and with no listener drops the connection
  // unanswered): it is refused as every other method is (docs/config-server.md, "Endpoints").
  server.on('connect', (req: IncomingMessage, socket: Duplex) => refuseConnect(req, socket, logger));
  // An `Expect` other than 100-continue would get Node's bare 417 (no error record, none of the
  // common headers); no endpoint takes a body, so there is nothing to expect: served as usual
  // (RFC 9110, section 10.1.1, lets a server ignore an expectation it does not understand).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  return { server, connections };
}

/** Answers `CONNECT` 404 `FILE_NOT_FOUND` (the error record, the common headers), then closes the connection. */
function refuseConnect(req: IncomingMessage, socket: Duplex, logger: Logger): void {
  const path = (req.url ?? '').slice(0, 300);
  logger.info({ method: 'CONNECT', path, status: 404, ip: req.socket.remoteAddress }, 'request');
  answerOnSocket(socket, new AppError('FILE_NOT_FOUND', { message: `no such endpoint: CONNECT ${path}` }), toErrorRecord, COMMON_HEADERS);
}

/**
 * Wraps the request listener: an HTTP/1.1 request without a `Host` header (RFC 9112, section 3.2:
 * a server must answer it 400) gets 400 `INVALID_REQUEST` `malformed HTTP request` with the error
 * record and the common headers, as the other protocol errors, and its connection is closed.
 */
function refuseMissingHost(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  logger: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  const log = throttledLog((fields, message) => logger.info(fields, message), { everyMs: 1_000, countAs: 'refusals' });
  return function configServerRequest(req, res) {
    if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) {
      listener(req, res);
      return;
    }
    const error = new AppError('INVALID_REQUEST', {
      message: 'malformed HTTP request',
      details: 'an HTTP/1.1 request needs a Host header',
    });
    log(
      { ip: req.socket.remoteAddress, status: error.status, code: error.code, error: 'missing Host header' },
      `protocol error answered: ${error.message}`,
    );
    const body = JSON.stringify(toErrorRecord(error));
    res.shouldKeepAlive = false;
    res.writeHead(error.status, {
      ...COMMON_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    });
    res.end(body);
  };
}

/** Notes the code of a refusal in the request's audit line, then lets the error handler answer. */
function auditErrorCode(): ErrorRequestHandler {
  return function auditErrorCode(err, _req, res, next) {
    const fields = res.locals.audit as AuditFields | undefined;
    if (fields !== undefined) fields.code = toAppError(err).code;
    next(err);
  };
}

function commonHeaders(): RequestHandler {
  const entries = Object.entries(COMMON_HEADERS);
  return function commonHeaders(_req, res, next) {
    for (const [name, value] of entries) res.setHeader(name, value);
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
