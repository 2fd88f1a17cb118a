import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, readBool, readEnum, readInt, readLogLevel, readPort, readString, type Env } from '@repo/config';
import { readServerLimits, readTrustProxy, type ServerLimitDefaults, type TrustProxy } from '@repo/http';

/** The storage backends, chosen by `STORAGE_BACKEND`. */
export const STORAGE_BACKENDS = ['sqlite', 'redis'] as const;

/** One of {@link STORAGE_BACKENDS}. */
export type StorageBackendName = (typeof STORAGE_BACKENDS)[number];

/** Lifetime of a value stored without `ttl` when the permanent option is off (docs/storage.md, "Expiry"). */
export const DEFAULT_TTL_SECONDS = 86_400;

/** Default cap on `ttl`: 365 days (docs/storage.md, "Limits"; a cap keeps the sweeper's index meaningful). */
export const DEFAULT_MAX_TTL_SECONDS = 31_536_000;

/** Default request body cap: 1 MiB (the largest value is then about 512 KiB of bytes, sent as hex). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Everything the storage service reads from its environment, validated once at start. */
export interface StorageConfig {
  host: string;
  port: number;
  dataDir: string;
  logLevel: string;
  /** Values stored without `ttl` never expire (`STORAGE_PERMANENT` or `--permanent`). */
  permanent: boolean;
  backend: StorageBackendName;
  /** The SQLite database file (`DATA_DIR/storage.sqlite`). */
  sqliteFile: string;
  redisUrl: string;
  /** Prefix of every Redis key this service writes, so a Redis can be shared. */
  redisKeyPrefix: string;
  /** Milliseconds to wait for Redis at start before giving up. */
  redisConnectTimeoutMs: number;
  /** A Redis command not answered in this time fails the request with 503 (REDIS_COMMAND_TIMEOUT_MS). */
  redisCommandTimeoutMs: number;
  /** Lifetime of a value stored without `ttl` (unless permanent). */
  defaultTtlSeconds: number;
  /** Largest `ttl` accepted. */
  maxTtlSeconds: number;
  /** Largest request body accepted (413 above). */
  maxBodyBytes: number;
  /** Milliseconds between background sweeps of expired rows. */
  sweepIntervalMs: number;
  /** Rows deleted per sweep transaction. */
  sweepBatchSize: number;
  /** Requests per minute per client address (0: no limit). */
  rateLimitPerMinute: number;
  /** Requests per second per client address (0: no burst limit). */
  rateLimitPerSecond: number;
  /** Simultaneous connections per client address. */
  maxConnectionsPerIp: number;
  /** Simultaneous connections in all (0: no cap). */
  maxConnections: number;
  /** A request not answered (or not received: headers and body) within this many ms gets 408. */
  requestTimeoutMs: number;
  /** A request's headers not received within this many ms get 408. */
  headersTimeoutMs: number;
  /** Bodies read and parsed at once; past that, 503. */
  maxConcurrentBodies: number;
  /** Requests in progress at once; past that, 503. */
  maxInFlight: number;
  /** Which peers are proxies whose `X-Forwarded-For` and `X-Request-Id` are believed (`TRUST_PROXY`; docs/README.md, "Trusted proxies"). */
  trustProxy: TrustProxy;
}

/** The app folder (`apps/storage`), from `src/` under jest or `dist/` when built. */
const APP_DIR = resolve(__dirname, '..');

/** The listener's caps and deadlines when unset (`--help` shows them from here too). */
export const SERVER_LIMIT_DEFAULTS: ServerLimitDefaults = { maxConnections: 4_096, maxConnectionsPerIp: 256, noGlobalCap: true };

/**
 * Reads the storage settings from `env` and the command line `argv` (only `--permanent` is
 * known). Throws a ConfigError naming the variable or option that is wrong.
 */
export function loadConfig(env: Env = process.env, argv: readonly string[] = []): StorageConfig {
  let permanentFlag = false;
  try {
    const { values } = parseArgs({ args: [...argv], options: { permanent: { type: 'boolean' } }, strict: true, allowPositionals: false });
    permanentFlag = values.permanent === true;
  } catch (err) {
    throw new ConfigError(`command line: ${(err as Error).message.split('\n')[0]} (known option: --permanent)`);
  }

  const dataDir = resolve(readString(env, 'DATA_DIR', resolve(APP_DIR, 'data')));
  const redisUrl = readString(env, 'REDIS_URL', 'redis://127.0.0.1:6379');
  assertRedisUrl(redisUrl);

  return {
    host: readString(env, 'HOST', '127.0.0.1'),
    port: readPort(env, 'PORT', 8081),
    dataDir,
    logLevel: readLogLevel(env),
    // The flag can only switch the option on; STORAGE_PERMANENT=false does not undo --permanent.
    permanent: permanentFlag || readBool(env, 'STORAGE_PERMANENT', false),
    backend: readEnum(env, 'STORAGE_BACKEND', STORAGE_BACKENDS, 'sqlite'),
    sqliteFile: resolve(dataDir, 'storage.sqlite'),
    redisUrl,
    redisKeyPrefix: readString(env, 'REDIS_KEY_PREFIX', 'storage:'),
    redisConnectTimeoutMs: readInt(env, 'REDIS_CONNECT_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }),
    redisCommandTimeoutMs: readInt(env, 'REDIS_COMMAND_TIMEOUT_MS', 5_000, { min: 10, max: 600_000 }),
    defaultTtlSeconds: DEFAULT_TTL_SECONDS,
    maxTtlSeconds: readInt(env, 'STORAGE_MAX_TTL_SECONDS', DEFAULT_MAX_TTL_SECONDS, { min: 1, max: 3_153_600_000 }),
    maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, { min: 1_024, max: 512 * 1024 * 1024 }),
    sweepIntervalMs: readInt(env, 'STORAGE_SWEEP_INTERVAL_MS', 60_000, { min: 10, max: 86_400_000 }),
    sweepBatchSize: readInt(env, 'STORAGE_SWEEP_BATCH', 1_000, { min: 1, max: 100_000 }),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 120_000, { min: 0 }),
    rateLimitPerSecond: readInt(env, 'RATE_LIMIT_PER_SECOND', 5_000, { min: 0 }),
    ...readServerLimits(env, SERVER_LIMIT_DEFAULTS),
    maxInFlight: readInt(env, 'MAX_IN_FLIGHT', 2_048, { min: 1 }),
    trustProxy: readTrustProxy(env),
    maxConcurrentBodies: readInt(env, 'MAX_CONCURRENT_BODIES', 64, { min: 1, max: 100_000 }),
  };
}

function assertRedisUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL must be a URL such as redis://127.0.0.1:6379');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  }
}
