import { readFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Express } from 'express';
import { ConfigError } from '@repo/config';
import type { ServiceMetrics } from '@repo/metrics';
import {
  closeServers,
  loadOrCreateTlsCredentials,
  once,
  watchCertificate,
  type CertificateWatch,
  type Logger,
  type ServiceApp,
} from '@repo/service';
import type { RelayConfig } from './config';
import { createRedisLog, createSqliteLog, deferEventLog, type DeferredEventLog } from './event-log';
import { persistIdentity, relayIdentity } from './identity';
import type { PeerTlsOptions } from './peer-tls';
import { createRelay, type Relay } from './relay';
import { createHttpApi, createWsServer, guardServers, type WsServer } from './servers';
import { loadTokenFile, TokenFileError, type TokenFile } from './token-file';
import { RELAY_VERSION } from './version';

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

/** The event log chosen by RELAY_EVENT_STORE, opened by `start()`. */
function eventLogOf(config: RelayConfig, relayId: string, logger: Logger): DeferredEventLog {
  const { eventStore } = config;
  const retention = { maxAgeMs: eventStore.retentionMs, maxEvents: eventStore.retentionEvents };
  return deferEventLog(eventStore.kind, async () => {
    if (eventStore.kind === 'sqlite') return createSqliteLog({ file: eventStore.sqliteFile, retention, logger });
    try {
      return await createRedisLog({ url: eventStore.redisUrl, keyPrefix: eventStore.redisKeyPrefix, relayId, retention, logger });
    } catch (err) {
      throw new ConfigError(`RELAY_EVENT_STORE=redis: ${(err as Error).message}`);
    }
  });
}

/** Installs the certificate of a `wss` listener and watches its files (reloaded on SIGHUP and on change). */
async function loadTls(ws: WsServer, config: RelayConfig, logger: Logger): Promise<CertificateWatch | undefined> {
  if (ws.https === undefined || ws.tlsFiles === undefined) return undefined;
  const tls = await loadOrCreateTlsCredentials({ ...ws.tlsFiles, dataDir: config.dataDir });
  ws.https.setSecureContext({ cert: tls.cert, key: tls.key });
  logger.info({ fingerprint: tls.fingerprint }, 'WebSocket served over TLS (wss)');
  // Open WebSockets keep theirs (README, "Operations").
  return watchCertificate({ ...ws.tlsFiles, servers: [ws.https], logger });
}

/** Reads RELAY_PEER_CA_FILE, a ConfigError naming it when it cannot. */
function readPeerCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`RELAY_PEER_CA_FILE (${file}) cannot be read: ${reason}`);
  }
}

/** Loads RELAY_TOKEN_FILE (re-read when it changes; removed tokens' connections closed). */
function openTokenFile(config: RelayConfig, relay: Relay, logger: Logger): TokenFile {
  try {
    return loadTokenFile({
      file: config.tokenFile!,
      logger,
      intervalMs: config.tokenFileIntervalMs,
      onReload: (removed) => relay.revokeTokens(removed),
    });
  } catch (err) {
    if (err instanceof TokenFileError) throw new ConfigError(`RELAY_TOKEN_FILE: ${err.message}`);
    throw err;
  }
}

/**
 * Builds the relay: its identity (`identity.ts`), the WebSocket server (TLS when
 * TLS_CERT_FILE/TLS_KEY_FILE are set) and the HTTP API with its limits (`servers.ts`). Nothing
 * listens, nothing is written or opened: `start()` loads the certificate, the peer CA and the
 * token file, writes the generated identity and token (mode 0600), and opens the event log; a
 * file it cannot read is a ConfigError naming its variable.
 */
export function createApp(config: RelayConfig, deps: RelayDeps): RelayApp {
  const { logger } = deps;
  const id = relayIdentity(config);
  const ws = createWsServer(config);
  // The peer CA is read by `start()`; the mesh reads it from here when it connects to a wss:// peer.
  const peerTls: PeerTlsOptions = { fingerprints: config.peerFingerprints };
  let tokenFile: TokenFile | undefined;
  let certificateWatch: CertificateWatch | undefined;
  const eventLog = eventLogOf(config, id.relayId, logger);
  const relay = createRelay({
    relayId: id.relayId,
    version: RELAY_VERSION,
    publishToken: id.publishToken,
    authToken: config.authToken,
    meshToken: id.meshToken,
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
  relay.attach(ws.server);
  const http = createHttpApi(config, relay, eventLog, logger);
  guardServers(config, http.server, ws.server, logger);
  const servers = { ws: ws.server, http: http.server };
  return {
    servers,
    relay,
    app: http.app,
    wsScheme: ws.scheme,
    publishTokenFile: id.publishTokenFile,
    metrics: http.metrics,
    async start() {
      http.metrics.start();
      // The operator's files first (read only), so a start that fails on one of them writes nothing.
      certificateWatch = await loadTls(ws, config, logger);
      if (config.peerCaFile !== undefined) peerTls.ca = readPeerCa(config.peerCaFile);
      if (config.tokenFile !== undefined) tokenFile = openTokenFile(config, relay, logger);
      persistIdentity(id, config, logger);
      if (config.paymentsPublic) logger.warn('RELAY_PAYMENTS_PUBLIC=true: payment events go to every client, whatever its token');
      await eventLog.open();
      const { eventStore: store } = config;
      logger.info(
        {
          store: store.kind,
          ...(store.kind === 'sqlite' ? { file: store.sqliteFile } : { prefix: store.redisKeyPrefix }),
          retention_ms: store.retentionMs,
          retention_events: store.retentionEvents,
        },
        'event log',
      );
      relay.start();
      logger.info({ relay_id: relay.relayId, scheme: ws.scheme, peers: config.peers }, 'relay starting');
    },
    close: once(async () => {
      certificateWatch?.close();
      tokenFile?.close();
      await relay.close();
      await closeServers(servers, 2_000);
    }),
  };
}
