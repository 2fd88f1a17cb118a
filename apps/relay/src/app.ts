import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { join } from 'node:path';
import type { Express } from 'express';
import { documentHandler } from '@repo/api-contract';
import { errorHandler, notFoundHandler, toNestedErrorRecord } from '@repo/errors';
import { keyFingerprint } from '@repo/crypto';
import { ConfigError } from '@repo/config';
import {
  closeServers,
  loadOrCreateTlsCredentials,
  once,
  readOrCreateSecretFile,
  watchCertificate,
  type CertificateWatch,
  type Logger,
  type ServiceApp,
} from '@repo/service';
import { createRateLimiter, jsonBody, guardServer, overloadGuard, rateLimit, requestTimeout } from '@repo/http';
import { createExpressApp, serveExpress } from '@repo/http/express';
import type { ServiceMetrics } from '@repo/metrics';
import { createRelayMetrics, readyHandler } from './prometheus';
import type { RelayConfig } from './config';
import { createRedisLog, createSqliteLog, deferEventLog } from './event-log';
import type { PeerTlsOptions } from './peer-tls';
import { createRelay, type Relay } from './relay';
import { loadTokenFile, TokenFileError, type TokenFile } from './token-file';
import { createHealthRouter } from './routes/health';
import { createRelaysRouter } from './routes/relays';
import { requestChecks } from './routes/request-checks';
import { createStatusRouter } from './routes/status';
import { RELAY_VERSION } from './version';
import { ASYNCAPI } from './asyncapi';
import { OPENAPI } from './openapi';

/** Dependencies of {@link createApp}. */
export interface RelayDeps {
  logger: Logger;
}

/**
 * The relay's servers, built but not listening (the shape of every app: `servers`, `start()`,
 * `close()`), and what tests and the bench read of it.
 */
export interface RelayApp extends ServiceApp<{ ws: HttpServer | HttpsServer; http: HttpServer }> {
  relay: Relay;
  /** Express app of the HTTP API (8091). */
  app: Express;
  /** `ws` or `wss`. */
  wsScheme: 'ws' | 'wss';
  /** Where the generated publish token lives (undefined when RELAY_PUBLISH_TOKEN is set). */
  publishTokenFile: string | undefined;
  metrics: ServiceMetrics;
}

/** The version reported in health, status and StateSync. */
export { RELAY_VERSION };

const RELAY_ID_FILE = 'relay-id';
const PUBLISH_TOKEN_FILE = 'publish-token';

function fingerprintOf(token: string): string {
  return keyFingerprint(new TextEncoder().encode(token));
}

/**
 * Builds the relay: its identity (RELAY_ID, or the one in DATA_DIR/relay-id, or one generated in
 * memory), its publish token (RELAY_PUBLISH_TOKEN, or DATA_DIR/publish-token, or one generated in
 * memory), the WebSocket server (TLS when TLS_CERT_FILE/TLS_KEY_FILE are set) and the HTTP API
 * with its limits. Nothing listens, nothing is written or opened: `start()` writes the generated
 * identity and token (mode 0600), loads the certificate, the peer CA and the token file, and opens
 * the event log; a file it cannot read is a ConfigError naming its variable.
 */
export function createApp(config: RelayConfig, deps: RelayDeps): RelayApp {
  const { logger } = deps;
  const relayIdFile =
    config.relayId === undefined
      ? readOrCreateSecretFile(join(config.dataDir, RELAY_ID_FILE), () => `relay-${randomBytes(6).toString('hex')}`)
      : undefined;
  const relayId = config.relayId ?? relayIdFile!.value;
  const publishTokenFile = config.publishToken === undefined ? join(config.dataDir, PUBLISH_TOKEN_FILE) : undefined;
  const publishSecret =
    publishTokenFile === undefined ? undefined : readOrCreateSecretFile(publishTokenFile, () => randomBytes(32).toString('hex'));
  const publishToken = config.publishToken ?? publishSecret!.value;
  const meshToken = config.meshToken ?? publishToken;

  // Plain HTTP requests on the WebSocket port get 426 (RFC 7231 6.5.15).
  const upgradeRequired = (_req: unknown, res: import('node:http').ServerResponse) => {
    const body = JSON.stringify({
      error: { code: 'INVALID_REQUEST', message: 'this port serves WebSocket only', details: `HTTP API on port ${config.httpPort}` },
    });
    res.writeHead(426, { 'Content-Type': 'application/json', Upgrade: 'websocket', Connection: 'close' }).end(body);
  };
  // With TLS the certificate is installed by `start()` (setSecureContext), not read here.
  const tlsFiles =
    config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined
      ? { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile }
      : undefined;
  const httpsServer =
    tlsFiles === undefined ? undefined : createHttpsServer({ handshakeTimeout: config.limits.headersTimeoutMs }, upgradeRequired);
  const wsServer: HttpServer | HttpsServer = httpsServer ?? createHttpServer(upgradeRequired);
  const wsScheme = httpsServer === undefined ? 'ws' : 'wss';
  let certificateWatch: CertificateWatch | undefined;

  // The peer CA is read by `start()`; the mesh reads it from here when it connects to a wss:// peer.
  const peerTls: PeerTlsOptions = { fingerprints: config.peerFingerprints };
  let tokenFile: TokenFile | undefined;

  const retention = { maxAgeMs: config.eventStore.retentionMs, maxEvents: config.eventStore.retentionEvents };
  const { eventStore } = config;
  const eventLog = deferEventLog(eventStore.kind, async () => {
    if (eventStore.kind === 'sqlite') {
      return createSqliteLog({ file: eventStore.sqliteFile, retention, logger });
    }
    try {
      return await createRedisLog({ url: eventStore.redisUrl, keyPrefix: eventStore.redisKeyPrefix, relayId, retention, logger });
    } catch (err) {
      throw new ConfigError(`RELAY_EVENT_STORE=redis: ${(err as Error).message}`);
    }
  });

  const relay = createRelay({
    relayId,
    version: RELAY_VERSION,
    publishToken,
    authToken: config.authToken,
    meshToken,
    meshTokenSource:
      config.meshToken !== undefined ? 'RELAY_MESH_TOKEN' : 'RELAY_MESH_TOKEN (unset here, so the publish token: RELAY_PUBLISH_TOKEN)',
    paymentsPublic: config.paymentsPublic,
    clientToken: config.tokenFile === undefined ? undefined : (token: string) => tokenFile?.lookup(token),
    peers: config.peers,
    eventLog,
    peerTls,
    limits: config.limits,
    timing: config.timing,
    logger,
    trustProxy: config.trustProxy,
  });
  relay.attach(wsServer);
  const { metrics, handler: metricsHandler } = createRelayMetrics(relay, eventLog);

  const app = createExpressApp({ trustProxy: config.trustProxy, logger, use: [metrics.middleware()] });
  app.use(requestChecks());
  // The API documents (docs/relay.md, "API documents"), before the rate limit.
  app.get('/openapi.json', documentHandler(OPENAPI));
  app.get('/asyncapi.json', documentHandler(ASYNCAPI));
  app.use(rateLimit(createRateLimiter({ perMinute: config.limits.rateLimitPerMinute })));
  app.use(overloadGuard(config.limits.maxHttpConnections));
  app.use(requestTimeout(config.limits.requestTimeoutMs));
  app.use(jsonBody({ limitBytes: config.limits.maxBodyBytes, maxConcurrent: config.limits.maxConcurrentBodies }));
  app.use(createHealthRouter({ relay }));
  app.get('/ready', readyHandler(eventLog));
  app.use(createStatusRouter({ relay, metrics: metricsHandler }));
  app.use(createRelaysRouter({ relay }));
  app.use(notFoundHandler());
  app.use(errorHandler({ logger, format: 'nested' }));

  const httpServer = createHttpServer(serveExpress(app, logger));
  // One address cannot take every slot (docs/relay.md, "HTTP limits"): a per-address cap, a
  // reserve for new addresses, header and request deadlines, protocol errors in the error record.
  const deadlines = { headersTimeoutMs: config.limits.headersTimeoutMs, requestTimeoutMs: config.limits.requestTimeoutMs };
  const guard = { logger, errorBody: toNestedErrorRecord };
  guardServer(
    httpServer,
    { maxConnectionsPerIp: config.limits.maxHttpConnectionsPerIp, maxConnections: config.limits.maxHttpConnections, ...deadlines },
    guard,
  );
  // TCP room above MAX_WS_CONNECTIONS, so an upgrade past it still gets the relay's 503 answer.
  // The guard keeps a tenth of its cap for addresses with no connection open; the cap is sized so
  // that what is left for the others still holds MAX_WS_CONNECTIONS and the room: otherwise
  // clients of addresses that already have a connection would be cut below the limit, without 503.
  const wsRoom = Math.max(10, Math.ceil(config.limits.maxWsConnections / 10));
  const wsTcpCap = Math.ceil(((config.limits.maxWsConnections + wsRoom) * 10) / 9);
  guardServer(wsServer, { maxConnectionsPerIp: config.limits.maxWsConnectionsPerIp, maxConnections: wsTcpCap, ...deadlines }, guard);

  const servers = { ws: wsServer, http: httpServer };
  return {
    servers,
    relay,
    app,
    wsScheme,
    publishTokenFile,
    metrics,
    async start() {
      metrics.start();
      // The operator's files first (read only), so a start that fails on one of them writes nothing.
      if (httpsServer !== undefined && tlsFiles !== undefined) {
        const tls = await loadOrCreateTlsCredentials({ ...tlsFiles, dataDir: config.dataDir });
        httpsServer.setSecureContext({ cert: tls.cert, key: tls.key });
        logger.info({ fingerprint: tls.fingerprint }, 'WebSocket served over TLS (wss)');
        // Reloaded on SIGHUP and when the files change; open WebSockets keep theirs (README, "Operations").
        certificateWatch = watchCertificate({ ...tlsFiles, servers: [httpsServer], logger });
      }
      if (config.peerCaFile !== undefined) {
        try {
          peerTls.ca = readFileSync(config.peerCaFile, 'utf8');
        } catch (err) {
          const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
          throw new ConfigError(`RELAY_PEER_CA_FILE (${config.peerCaFile}) cannot be read: ${reason}`);
        }
      }
      if (config.tokenFile !== undefined) {
        try {
          tokenFile = loadTokenFile({
            file: config.tokenFile,
            logger,
            intervalMs: config.tokenFileIntervalMs,
            onReload: (removed) => relay.revokeTokens(removed),
          });
        } catch (err) {
          if (err instanceof TokenFileError) throw new ConfigError(`RELAY_TOKEN_FILE: ${err.message}`);
          throw err;
        }
      }
      relayIdFile?.persist();
      if (relayIdFile?.created === true) logger.info({ file: join(config.dataDir, RELAY_ID_FILE), relay_id: relayId }, 'relay id created');
      if (publishSecret !== undefined) {
        publishSecret.persist();
        // Log where the token is, never its value (docs/relay.md, "Publishing").
        logger.info({ file: publishTokenFile, fingerprint: fingerprintOf(publishToken), created: publishSecret.created }, 'publish token');
        if (publishSecret.exposed) logger.warn({ file: publishTokenFile }, 'publish token file is readable by other users');
      }
      if (config.peers.length > 0 || config.meshToken !== undefined) {
        logger.info(
          { fingerprint: fingerprintOf(meshToken), source: config.meshToken !== undefined ? 'RELAY_MESH_TOKEN' : 'publish token' },
          'mesh token',
        );
      }
      if (config.paymentsPublic) logger.warn('RELAY_PAYMENTS_PUBLIC=true: payment events go to every client, whatever its token');
      await eventLog.open();
      logger.info(
        {
          store: eventStore.kind,
          ...(eventStore.kind === 'sqlite' ? { file: eventStore.sqliteFile } : { prefix: eventStore.redisKeyPrefix }),
          retention_ms: retention.maxAgeMs,
          retention_events: retention.maxEvents,
        },
        'event log',
      );
      relay.start();
      logger.info({ relay_id: relay.relayId, scheme: wsScheme, peers: config.peers }, 'relay starting');
    },
    close: once(async () => {
      certificateWatch?.close();
      tokenFile?.close();
      await relay.close();
      await closeServers(servers, 2_000);
    }),
  };
}
