import { resolve } from 'node:path';
import { readBool, readInt, readOptional, readPort, readString, readHex, type Env } from '@repo/http';

/** Everything the config server reads from its environment, once, at start. */
export interface ConfigServerConfig {
  host: string;
  port: number;
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
  rateLimitPerMinute: number;
  rateLimitPerSecond: number;
  maxConnectionsPerIp: number;
  requestTimeoutMs: number;
  maxFileBytes: number;
  maxRequestBytes: number;
  maxInFlight: number;
  /** How long a rendered file is reused before the disk is read again (ms). */
  fileCacheMs: number;
  /** Start in maintenance (every endpoint answers 503) — see also the `MAINTENANCE` flag file. */
  maintenance: boolean;
  logLevel: string;
}

const APP_DIR = resolve(__dirname, '..');
const REPO_DIR = resolve(APP_DIR, '..', '..');

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
    domain: readString(env, 'PUBLIC_DOMAIN', 'localhost'),
    dataDir,
    storageDir: resolve(readString(env, 'STORAGE_DIR', resolve(REPO_DIR, 'storage'))),
    keysDir,
    clientKeysDir: resolve(readString(env, 'CLIENT_KEYS_DIR', resolve(keysDir, 'clients'))),
    clientKeysRecheckMs: readInt(env, 'CLIENT_KEYS_RECHECK_MS', 1_000, { min: 0, max: 60_000 }),
    masterKeyHex: readHex(env, 'CONFIG_MASTER_KEY', 32),
    tlsCertFile: readOptional(env, 'TLS_CERT_FILE'),
    tlsKeyFile: readOptional(env, 'TLS_KEY_FILE'),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 100, { min: 0 }),
    rateLimitPerSecond: readInt(env, 'RATE_LIMIT_PER_SECOND', 10, { min: 0 }),
    maxConnectionsPerIp: readInt(env, 'MAX_CONNECTIONS_PER_IP', 50, { min: 1 }),
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 30_000, { min: 1 }),
    maxFileBytes: readInt(env, 'MAX_FILE_BYTES', 10 * 1024 * 1024, { min: 1 }),
    maxRequestBytes: readInt(env, 'MAX_REQUEST_BYTES', 1024 * 1024, { min: 1 }),
    maxInFlight: readInt(env, 'MAX_IN_FLIGHT', 256, { min: 1 }),
    fileCacheMs: readInt(env, 'FILE_CACHE_MS', 1_000, { min: 0, max: 60_000 }),
    maintenance: readBool(env, 'MAINTENANCE_MODE', false),
    logLevel: readString(env, 'LOG_LEVEL', 'info'),
  };
}
