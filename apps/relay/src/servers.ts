import { createServer as createHttpServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Express } from 'express';
import { documentHandler } from '@repo/api-contract';
import { errorHandler, notFoundHandler, toNestedErrorRecord } from '@repo/errors';
import { createRateLimiter, guardServer, jsonBody, overloadGuard, rateLimit, requestTimeout } from '@repo/http';
import { createExpressApp, serveExpress } from '@repo/http/express';
import type { ServiceMetrics } from '@repo/metrics';
import type { Logger } from '@repo/service';
import { ASYNCAPI } from './asyncapi';
import type { RelayConfig } from './config';
import type { EventLog } from './event-log';
import { createRelayMetrics } from './metrics';
import { OPENAPI } from './openapi';
import type { Relay } from './relay';
import { createHealthRouter } from './routes/health';
import { createRelaysRouter } from './routes/relays';
import { requestChecks } from './routes/request-checks';
import { createStatusRouter } from './routes/status';

/** The WebSocket listener (plain, or TLS once `start()` installs the certificate). */
export interface WsServer {
  server: HttpServer | HttpsServer;
  /** Set with TLS_CERT_FILE/TLS_KEY_FILE. */
  https: HttpsServer | undefined;
  tlsFiles: { certFile: string; keyFile: string } | undefined;
  scheme: 'ws' | 'wss';
}

/**
 * The WebSocket port's server: TLS when TLS_CERT_FILE/TLS_KEY_FILE are set (the certificate is
 * installed by `start()`, not read here); plain HTTP requests get 426 (RFC 7231 6.5.15).
 */
export function createWsServer(config: RelayConfig): WsServer {
  const upgradeRequired = (_req: unknown, res: ServerResponse) => {
    const body = JSON.stringify({
      error: { code: 'INVALID_REQUEST', message: 'this port serves WebSocket only', details: `HTTP API on port ${config.httpPort}` },
    });
    res.writeHead(426, { 'Content-Type': 'application/json', Upgrade: 'websocket', Connection: 'close' }).end(body);
  };
  const tlsFiles =
    config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined
      ? { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile }
      : undefined;
  const https =
    tlsFiles === undefined ? undefined : createHttpsServer({ handshakeTimeout: config.limits.headersTimeoutMs }, upgradeRequired);
  return { server: https ?? createHttpServer(upgradeRequired), https, tlsFiles, scheme: https === undefined ? 'ws' : 'wss' };
}

/** The HTTP API (port 8091) and its metrics. */
export interface HttpApi {
  app: Express;
  server: HttpServer;
  metrics: ServiceMetrics;
}

/** The HTTP API: the API documents, then the limits, then the routes (docs/relay.md, "HTTP endpoints"). */
export function createHttpApi(config: RelayConfig, relay: Relay, eventLog: EventLog, logger: Logger): HttpApi {
  const { limits } = config;
  const { metrics, handler: metricsHandler } = createRelayMetrics(relay, eventLog);
  const app = createExpressApp({ trustProxy: config.trustProxy, logger, use: [metrics.middleware()] });
  app.use(requestChecks());
  // The API documents (docs/relay.md, "API documents"), before the rate limit.
  app.get('/openapi.json', documentHandler(OPENAPI));
  app.get('/asyncapi.json', documentHandler(ASYNCAPI));
  app.use(rateLimit(createRateLimiter({ perMinute: limits.rateLimitPerMinute })));
  app.use(overloadGuard(limits.maxHttpConnections));
  app.use(requestTimeout(limits.requestTimeoutMs));
  app.use(jsonBody({ limitBytes: limits.maxBodyBytes, maxConcurrent: limits.maxConcurrentBodies }));
  app.use(createHealthRouter({ relay, eventLog }));
  app.use(createStatusRouter({ relay, metrics: metricsHandler }));
  app.use(createRelaysRouter({ relay }));
  app.use(notFoundHandler());
  app.use(errorHandler({ logger, format: 'nested' }));
  return { app, server: createHttpServer(serveExpress(app, logger)), metrics };
}

/**
 * One address cannot take every slot (docs/relay.md, "HTTP limits"): a per-address cap, a reserve
 * for new addresses, header and request deadlines, protocol errors in the error record, on both ports.
 */
export function guardServers(config: RelayConfig, http: HttpServer, ws: HttpServer | HttpsServer, logger: Logger): void {
  const { limits } = config;
  const deadlines = { headersTimeoutMs: limits.headersTimeoutMs, requestTimeoutMs: limits.requestTimeoutMs };
  const guard = { logger, errorBody: toNestedErrorRecord };
  guardServer(
    http,
    { maxConnectionsPerIp: limits.maxHttpConnectionsPerIp, maxConnections: limits.maxHttpConnections, ...deadlines },
    guard,
  );
  // TCP room above MAX_WS_CONNECTIONS, so an upgrade past it still gets the relay's 503 answer.
  // The guard keeps a tenth of its cap for addresses with no connection open; the cap is sized so
  // that what is left for the others still holds MAX_WS_CONNECTIONS and the room: otherwise
  // clients of addresses that already have a connection would be cut below the limit, without 503.
  const wsRoom = Math.max(10, Math.ceil(limits.maxWsConnections / 10));
  const wsTcpCap = Math.ceil(((limits.maxWsConnections + wsRoom) * 10) / 9);
  guardServer(ws, { maxConnectionsPerIp: limits.maxWsConnectionsPerIp, maxConnections: wsTcpCap, ...deadlines }, guard);
}
