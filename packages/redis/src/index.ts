import { createClient, type RedisClientType } from 'redis';
import { backoff, throttledLog, type Logger } from '@repo/service';

/** The client {@link connectRedis} gives: `redis`'s own, with its default modules and RESP2. */
export type RedisClient = RedisClientType;

/** Options of {@link connectRedis}. */
export interface ConnectRedisOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (never logged). */
  url: string;
  /**
   * The start deadline, ms (default 10 000): a Redis not ready by then rejects the connection.
   * Once it has been ready, an outage is retried for ever (50 ms doubling to 2 s).
   */
  connectTimeoutMs?: number;
  /** Where outages and recoveries are logged. */
  logger?: Logger;
  /** What the log lines call this connection before "redis connection …" (e.g. `event log: `). */
  logPrefix?: string;
  /** Fail commands at once while disconnected instead of queueing them until Redis is back. */
  disableOfflineQueue?: boolean;
  /** Commands waiting for a reply at most; past it, new ones fail at once (Redis hung). */
  commandsQueueMaxLength?: number;
}

/** Outage warnings at most this often: a Redis that is down fails every retry (a line's `errors` counts them). */
const WARN_EVERY_MS = 5_000;

/**
 * A connected Redis client, as the services keep one: a Redis that does not answer within
 * `connectTimeoutMs` at start rejects with `cannot connect to Redis (REDIS_URL): …` (the cause
 * attached), so the service stops with one line; once ready, the client reconnects for ever with
 * backoff, warning at most every 5 s while Redis is away and saying when it is back.
 */
export async function connectRedis(options: ConnectRedisOptions): Promise<RedisClient> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const prefix = options.logPrefix ?? '';
  const { logger } = options;
  const started = Date.now();
  let everReady = false;
  const warnError = throttledLog((fields, message) => logger?.warn(fields, message), { everyMs: WARN_EVERY_MS, countAs: 'errors' });
  const client = createClient({
    url: options.url,
    RESP: 2, // the client's default, named so the client's type says it
    ...(options.disableOfflineQueue !== undefined ? { disableOfflineQueue: options.disableOfflineQueue } : {}),
    ...(options.commandsQueueMaxLength !== undefined ? { commandsQueueMaxLength: options.commandsQueueMaxLength } : {}),
    socket: {
      connectTimeout: Math.min(connectTimeoutMs, 5_000),
      reconnectStrategy(retries) {
        if (!everReady && Date.now() - started >= connectTimeoutMs) return new Error(`redis unreachable after ${connectTimeoutMs} ms`);
        return backoff(retries, { minMs: 50, maxMs: 2_000 });
      },
    },
  });
  client.on('error', (err: Error) => warnError({ err: { message: err.message } }, `${prefix}redis connection error`));
  client.on('ready', () => {
    if (everReady) logger?.info(`${prefix}redis connection restored`);
    everReady = true;
  });
  try {
    await client.connect();
  } catch (err) {
    if (client.isOpen) client.destroy();
    throw new Error(`cannot connect to Redis (REDIS_URL): ${(err as Error).message}`, { cause: err });
  }
  return client;
}
