import { join } from 'node:path';
import { normalizeSha256Fingerprint } from '@repo/crypto';
import {
  ConfigError,
  readBool,
  readEnum,
  readInt,
  readLogLevel,
  readList,
  readOptional,
  readPort,
  readString,
  type Env,
} from '@repo/config';
import { readConnectionCap, readDeadlines, readTrustProxy, type TrustProxy } from '@repo/http';

/** Settings of the relay, read once at start (README lists every variable with its default). */
export interface RelayConfig {
  host: string;
  dataDir: string;
  logLevel: string;
  /** Which peers are proxies whose `X-Forwarded-For` and `X-Request-Id` are believed (`TRUST_PROXY`; docs/README.md, "Trusted proxies"). */
  trustProxy: TrustProxy;
  wsPort: number;
  httpPort: number;
  /** Explicit `RELAY_ID`; undefined: generated once into `DATA_DIR/relay-id`. */
  relayId: string | undefined;
  /** Peer relay URLs (`ws://` or `wss://`). */
  peers: string[];
  /** Token every WebSocket client must present on upgrade; undefined: open relay. */
  authToken: string | undefined;
  /** Token that lets a connection publish events; undefined: generated into `DATA_DIR/publish-token`. */
  publishToken: string | undefined;
  /** Token that lets a connection act as a peer relay; undefined: the publish token. */
  meshToken: string | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** PEM file of the CA (or self-signed certificate) that signs `wss://` peers. */
  peerCaFile: string | undefined;
  /** SHA-256 fingerprints (`AB:CD:…`) of pinned `wss://` peer certificates. */
  peerFingerprints: string[];
  /** Where events are kept for replay and healing (docs/relay.md, "Replay"). */
  eventStore: EventStoreConfig;
  /** File of client tokens with scopes (docs/relay.md, "Client tokens"); undefined: none. */
  tokenFile: string | undefined;
  /** How often the token file's modification is checked (ms). */
  tokenFileIntervalMs: number;
  /** Payment events go to every client (RELAY_PAYMENTS_PUBLIC). */
  paymentsPublic: boolean;
  limits: RelayLimits;
  timing: RelayTiming;
}

/** The event stores, chosen by `RELAY_EVENT_STORE`. */
export const EVENT_STORES = ['sqlite', 'redis'] as const;

/** The event log's backend and retention. */
export interface EventStoreConfig {
  kind: (typeof EVENT_STORES)[number];
  /** SQLite file (in DATA_DIR). */
  sqliteFile: string;
  redisUrl: string;
  redisKeyPrefix: string;
  retentionMs: number;
  retentionEvents: number;
}

/** Default retention: 7 days, 1,000,000 events. */
export const DEFAULT_RETENTION = { retentionMs: 7 * 24 * 3600_000, retentionEvents: 1_000_000 } as const;

/** Limits (docs/relay.md, "WebSocket limits" and "HTTP limits"). */
export interface RelayLimits {
  maxWsConnections: number;
  maxMessageBytes: number;
  maxSendBufferBytes: number;
  rateLimitPerMinute: number;
  maxBodyBytes: number;
  maxHttpConnections: number;
  /** HTTP API connections per client address (kept below the global cap). */
  maxHttpConnectionsPerIp: number;
  /** WebSocket listener connections per client address (kept below the global cap). */
  maxWsConnectionsPerIp: number;
  /** Time to send a request's headers, ms (HTTP API and WebSocket upgrades). */
  headersTimeoutMs: number;
  /** Bodies read at once on the HTTP API. */
  maxConcurrentBodies: number;
  requestTimeoutMs: number;
  dedupMaxIds: number;
  dedupTtlMs: number;
  /** Largest message a client (no publish or mesh token) may send (bytes). */
  maxClientMessageBytes: number;
  /** Messages a client connection may send per second. */
  clientMessagesPerSecond: number;
  /** Messages the client connections of one address may send per second, together. */
  clientMessagesPerSecondPerIp: number;
  /** A client without a token that subscribes to nothing is closed after this long (ms; 0: never). */
  idleClientTimeoutMs: number;
}

/** Intervals and timeouts (milliseconds). */
export interface RelayTiming {
  heartbeatIntervalMs: number;
  syncIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  syncTimeoutMs: number;
  slowConsumerGraceMs: number;
  /** A heal starts this much before the last confirmed time (clock differences, a Redis clock). */
  healOverlapMs: number;
}

/** Default limits (docs/relay.md, "WebSocket limits" and "HTTP limits": 1000 connections, 1 MB messages, 30 s heartbeat, 200 req/min, 5 MB, 100 connections). */
export const DEFAULT_LIMITS: Readonly<RelayLimits> = {
  maxWsConnections: 1000,
  maxMessageBytes: 1024 * 1024,
  maxSendBufferBytes: 4 * 1024 * 1024,
  rateLimitPerMinute: 200,
  maxBodyBytes: 5 * 1024 * 1024,
  maxHttpConnections: 100,
  maxHttpConnectionsPerIp: 20,
  maxWsConnectionsPerIp: 100,
  headersTimeoutMs: 10_000,
  maxConcurrentBodies: 8,
  requestTimeoutMs: 30_000,
  dedupMaxIds: 100_000,
  dedupTtlMs: 10 * 60_000,
  maxClientMessageBytes: 16 * 1024,
  clientMessagesPerSecond: 20,
  clientMessagesPerSecondPerIp: 100,
  idleClientTimeoutMs: 60_000,
};

/** Default intervals. */
export const DEFAULT_TIMING: Readonly<RelayTiming> = {
  heartbeatIntervalMs: 30_000,
  syncIntervalMs: 30_000,
  reconnectMinMs: 500,
  reconnectMaxMs: 30_000,
  syncTimeoutMs: 5_000,
  slowConsumerGraceMs: 1_000,
  healOverlapMs: 5_000,
};

/** The package folder: DATA_DIR defaults to its `data/`. */
const APP_DIR = join(__dirname, '..');
const RELAY_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;
/**
 * Reads the relay's settings from `env`. Throws a ConfigError naming the variable when one is
 * malformed (never echoing a token).
 */
export function loadConfig(env: Env = process.env): RelayConfig {
  const relayId = readOptional(env, 'RELAY_ID');
  if (relayId !== undefined && !RELAY_ID_RE.test(relayId)) {
    throw new ConfigError('RELAY_ID must be 1 to 64 characters: letters, digits, ".", "_", ":" or "-"');
  }
  const peers = readList(env, 'RELAY_PEERS');
  for (const peer of peers) {
    let url: URL;
    try {
      url = new URL(peer);
    } catch {
      throw new ConfigError('RELAY_PEERS must be a comma-separated list of ws:// or wss:// URLs');
    }
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
      throw new ConfigError('RELAY_PEERS must be a comma-separated list of ws:// or wss:// URLs');
    }
  }
  const peerFingerprints = readList(env, 'RELAY_PEER_FINGERPRINT').map((f) => {
    const normalized = normalizeSha256Fingerprint(f);
    if (normalized === undefined)
      throw new ConfigError('RELAY_PEER_FINGERPRINT must be SHA-256 fingerprints (64 hex digits, colons allowed)');
    return normalized;
  });
  const tlsCertFile = readOptional(env, 'TLS_CERT_FILE');
  const tlsKeyFile = readOptional(env, 'TLS_KEY_FILE');
  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const token = (name: string): string | undefined => {
    const value = readOptional(env, name);
    if (value !== undefined && (value.length < 16 || value.length > 512 || /\s/.test(value))) {
      throw new ConfigError(`${name} must be 16 to 512 characters without white space`);
    }
    return value;
  };
  const reconnectMinMs = readInt(env, 'RELAY_RECONNECT_MIN_MS', DEFAULT_TIMING.reconnectMinMs, { min: 10, max: 600_000 });
  const reconnectMaxMs = readInt(env, 'RELAY_RECONNECT_MAX_MS', DEFAULT_TIMING.reconnectMaxMs, { min: 10, max: 3_600_000 });
  if (reconnectMaxMs < reconnectMinMs) throw new ConfigError('RELAY_RECONNECT_MAX_MS must be at least RELAY_RECONNECT_MIN_MS');
  const dataDir = readString(env, 'DATA_DIR', join(APP_DIR, 'data'));
  const redisUrl = readString(env, 'REDIS_URL', 'redis://127.0.0.1:6379');
  if (!/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  return {
    host: readString(env, 'HOST', '127.0.0.1'),
    dataDir,
    logLevel: readLogLevel(env),
    trustProxy: readTrustProxy(env),
    wsPort: readPort(env, 'WS_PORT', 8090),
    httpPort: readPort(env, 'HTTP_PORT', 8091),
    relayId,
    peers,
    authToken: token('RELAY_AUTH_TOKEN'),
    publishToken: token('RELAY_PUBLISH_TOKEN'),
    meshToken: token('RELAY_MESH_TOKEN'),
    tlsCertFile,
    tlsKeyFile,
    peerCaFile: readOptional(env, 'RELAY_PEER_CA_FILE'),
    peerFingerprints,
    eventStore: {
      kind: readEnum(env, 'RELAY_EVENT_STORE', EVENT_STORES, 'sqlite'),
      sqliteFile: join(dataDir, 'events.db'),
      redisUrl,
      redisKeyPrefix: readString(env, 'REDIS_KEY_PREFIX', 'relay:'),
      retentionMs: readInt(env, 'RELAY_RETENTION_MS', DEFAULT_RETENTION.retentionMs, { min: 1_000, max: 10 * 365 * 24 * 3600_000 }),
      retentionEvents: readInt(env, 'RELAY_RETENTION_EVENTS', DEFAULT_RETENTION.retentionEvents, { min: 1, max: 1_000_000_000 }),
    },
    tokenFile: readOptional(env, 'RELAY_TOKEN_FILE'),
    tokenFileIntervalMs: readInt(env, 'RELAY_TOKEN_FILE_INTERVAL_MS', 1_000, { min: 50, max: 3_600_000 }),
    paymentsPublic: readBool(env, 'RELAY_PAYMENTS_PUBLIC', false),
    limits: {
      maxWsConnections: readConnectionCap(env, 'MAX_WS_CONNECTIONS', DEFAULT_LIMITS.maxWsConnections),
      maxMessageBytes: readInt(env, 'MAX_MESSAGE_BYTES', DEFAULT_LIMITS.maxMessageBytes, { min: 1024, max: 64 * 1024 * 1024 }),
      maxSendBufferBytes: readInt(env, 'MAX_SEND_BUFFER_BYTES', DEFAULT_LIMITS.maxSendBufferBytes, { min: 1024, max: 1024 * 1024 * 1024 }),
      rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', DEFAULT_LIMITS.rateLimitPerMinute, { min: 0, max: 1_000_000 }),
      maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes, { min: 1024, max: 1024 * 1024 * 1024 }),
      maxHttpConnections: readConnectionCap(env, 'MAX_HTTP_CONNECTIONS', DEFAULT_LIMITS.maxHttpConnections),
      maxHttpConnectionsPerIp: readConnectionCap(env, 'MAX_HTTP_CONNECTIONS_PER_IP', DEFAULT_LIMITS.maxHttpConnectionsPerIp),
      maxWsConnectionsPerIp: readConnectionCap(env, 'MAX_WS_CONNECTIONS_PER_IP', DEFAULT_LIMITS.maxWsConnectionsPerIp),
      ...readDeadlines(env, DEFAULT_LIMITS),
      maxConcurrentBodies: readInt(env, 'MAX_CONCURRENT_BODIES', DEFAULT_LIMITS.maxConcurrentBodies, { min: 1, max: 10_000 }),
      dedupMaxIds: readInt(env, 'RELAY_DEDUP_MAX_IDS', DEFAULT_LIMITS.dedupMaxIds, { min: 100, max: 10_000_000 }),
      dedupTtlMs: readInt(env, 'RELAY_DEDUP_TTL_MS', DEFAULT_LIMITS.dedupTtlMs, { min: 1_000, max: 86_400_000 }),
      maxClientMessageBytes: readInt(env, 'MAX_CLIENT_MESSAGE_BYTES', DEFAULT_LIMITS.maxClientMessageBytes, {
        min: 256,
        max: 64 * 1024 * 1024,
      }),
      clientMessagesPerSecond: readInt(env, 'CLIENT_MESSAGES_PER_SECOND', DEFAULT_LIMITS.clientMessagesPerSecond, {
        min: 1,
        max: 1_000_000,
      }),
      clientMessagesPerSecondPerIp: readInt(env, 'CLIENT_MESSAGES_PER_SECOND_PER_IP', DEFAULT_LIMITS.clientMessagesPerSecondPerIp, {
        min: 1,
        max: 1_000_000,
      }),
      idleClientTimeoutMs: readInt(env, 'IDLE_CLIENT_TIMEOUT_MS', DEFAULT_LIMITS.idleClientTimeoutMs, { min: 0, max: 86_400_000 }),
    },
    timing: {
      heartbeatIntervalMs: readInt(env, 'HEARTBEAT_INTERVAL_MS', DEFAULT_TIMING.heartbeatIntervalMs, { min: 10, max: 3_600_000 }),
      syncIntervalMs: readInt(env, 'SYNC_INTERVAL_MS', DEFAULT_TIMING.syncIntervalMs, { min: 10, max: 86_400_000 }),
      reconnectMinMs,
      reconnectMaxMs,
      syncTimeoutMs: readInt(env, 'RELAY_SYNC_TIMEOUT_MS', DEFAULT_TIMING.syncTimeoutMs, { min: 10, max: 600_000 }),
      slowConsumerGraceMs: readInt(env, 'SLOW_CONSUMER_GRACE_MS', DEFAULT_TIMING.slowConsumerGraceMs, { min: 0, max: 600_000 }),
      healOverlapMs: readInt(env, 'RELAY_HEAL_OVERLAP_MS', DEFAULT_TIMING.healOverlapMs, { min: 0, max: 24 * 3600_000 }),
    },
  };
}
