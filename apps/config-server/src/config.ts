import { resolve } from 'node:path';
import { readBool, readInt, readLogLevel, readOptional, readPort, readString, readHex, type Env } from '@repo/config';
import { readServerLimits, readTrustProxy, type ServerLimitDefaults, type TrustProxy } from '@repo/http';

/** Everything the config server reads from its environment, once, at start. */
export interface ConfigServerConfig {
  host: string;
  port: number;
  /**
   * A second HTTPS listener (`HTTPS_ALT_PORT`, unset: none): the same service on a port that
   * `fetch` and browsers accept (6666 is on the Fetch standard's list of bad ports).
   */
  httpsAltPort: number | undefined;
  /** Public host name, as `/info` reports it. */
  domain: string;
  dataDir: string;
  storageDir: string;
  keysDir: string;
  /** Registered client public keys, one folder per environment: `<clientKeysDir>/<env>/<name>.pub`. */
  clientKeysDir: string;
  /** How long a listing of an environment's client keys is trusted before the folder is looked at again (ms). */
  clientKeysRecheckMs: number;
  /** 64 hex characters; when absent a master key is generated into `DATA_DIR/master.key`. */
  masterKeyHex: string | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** Which peers are proxies whose `X-Forwarded-For` and `X-Request-Id` are believed (`TRUST_PROXY`; docs/README.md, "Trusted proxies"). */
  trustProxy: TrustProxy;
  rateLimitPerMinute: number;
  rateLimitPerSecond: number;
  maxConnectionsPerIp: number;
  /** Simultaneous connections in all (MAX_CONNECTIONS); a tenth kept for new addresses. */
  maxConnections: number;
  /** Time to finish the TLS handshake and send a request's headers, ms (HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxFileBytes: number;
  maxRequestBytes: number;
  maxInFlight: number;
  /** How long a rendered file is reused before the disk is read again (ms). */
  fileCacheMs: number;
  /** 64 hex characters; when absent a version key is generated into `DATA_DIR/version.key`. */
  versionKeyHex: string | undefined;
  /** Versions of each file kept in `DATA_DIR/history` for `?version=`. */
  versionHistoryMax: number;
  /** How often a watched file is looked at with `stat`, besides file system events (ms). */
  watchPollMs: number;
  /** `?wait=` requests held at once, server-wide. */
  maxWaiting: number;
  /** The audit log: one JSON line per file served or refused. */
  auditLogFile: string;
  auditLogMaxBytes: number;
  auditLogKeep: number;
  /** Start in maintenance (every endpoint answers 503) — see also the `MAINTENANCE` flag file. */
  maintenance: boolean;
  logLevel: string;
}

const APP_DIR = resolve(__dirname, '..');
const REPO_DIR = resolve(APP_DIR, '..', '..');

/** The listener's caps and deadlines when unset (`--help` shows them from here too). */
export const SERVER_LIMIT_DEFAULTS: ServerLimitDefaults = { maxConnections: 500, maxConnectionsPerIp: 50 };

/**
 * Reads the configuration (names of docs/config-server.md, "Configuration"); throws a
 * ConfigError naming the first malformed variable.
 */
export function loadConfig(env: Env = process.env): ConfigServerConfig {
  const dataDir = resolve(readString(env, 'DATA_DIR', resolve(APP_DIR, 'data')));
  const keysDir = resolve(readString(env, 'KEYS_DIR', resolve(dataDir, 'keys')));
  return {
    host: readString(env, 'HOST', '127.0.0.1'),
    port: readPort(env, 'PORT', 6666),
    httpsAltPort: readOptional(env, 'HTTPS_ALT_PORT') === undefined ? undefined : readPort(env, 'HTTPS_ALT_PORT', 0),
    domain: readString(env, 'PUBLIC_DOMAIN', 'localhost'),
    dataDir,
    storageDir: resolve(readString(env, 'STORAGE_DIR', resolve(REPO_DIR, 'storage'))),
    keysDir,
    clientKeysDir: resolve(readString(env, 'CLIENT_KEYS_DIR', resolve(keysDir, 'clients'))),
    clientKeysRecheckMs: readInt(env, 'CLIENT_KEYS_RECHECK_MS', 1_000, { min: 0, max: 60_000 }),
    masterKeyHex: readHex(env, 'CONFIG_MASTER_KEY', 32),
    tlsCertFile: readOptional(env, 'TLS_CERT_FILE'),
    tlsKeyFile: readOptional(env, 'TLS_KEY_FILE'),
    trustProxy: readTrustProxy(env),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 100, { min: 0 }),
    rateLimitPerSecond: readInt(env, 'RATE_LIMIT_PER_SECOND', 10, { min: 0 }),
    ...readServerLimits(env, SERVER_LIMIT_DEFAULTS),
    maxFileBytes: readInt(env, 'MAX_FILE_BYTES', 10 * 1024 * 1024, { min: 1 }),
    maxRequestBytes: readInt(env, 'MAX_REQUEST_BYTES', 1024 * 1024, { min: 1 }),
    maxInFlight: readInt(env, 'MAX_IN_FLIGHT', 256, { min: 1 }),
    fileCacheMs: readInt(env, 'FILE_CACHE_MS', 1_000, { min: 0, max: 60_000 }),
    versionKeyHex: readHex(env, 'CONFIG_VERSION_KEY', 32),
    versionHistoryMax: readInt(env, 'VERSION_HISTORY_MAX', 20, { min: 1, max: 10_000 }),
    watchPollMs: readInt(env, 'WATCH_POLL_MS', 500, { min: 50, max: 60_000 }),
    maxWaiting: readInt(env, 'MAX_WAITING', 10_000, { min: 0 }),
    auditLogFile: resolve(readString(env, 'AUDIT_LOG_FILE', resolve(dataDir, 'audit.log'))),
    auditLogMaxBytes: readInt(env, 'AUDIT_LOG_MAX_BYTES', 10 * 1024 * 1024, { min: 1024 }),
    auditLogKeep: readInt(env, 'AUDIT_LOG_KEEP', 5, { min: 0, max: 1000 }),
    maintenance: readBool(env, 'MAINTENANCE_MODE', false),
    logLevel: readLogLevel(env),
  };
}
