import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '@repo/http';
import { BackendUnavailableError, expiresAt, type StorageBackend } from './backend';

/** Options of {@link createRedisBackend}. */
export interface RedisBackendOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. Never logged (it may hold a password). */
  url: string;
  /** Prefix of every key written (default `storage:`). */
  keyPrefix?: string;
  /** Give up connecting at start after this many ms (default 10000). */
  connectTimeoutMs?: number;
  logger?: Logger;
}

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

// Expiry is Redis's own (SET … PXAT), computed from the caller's clock; these scripts also
// hide a value whose expiry instant has passed on that clock, so both backends agree on what
// "expired at now" means even when the Redis host's clock lags behind.
// PEXPIRETIME (Redis 7.0): -1 no expiry, -2 no key, else the expiry in ms since the epoch.
const GET_LIVE = script(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
local t = redis.call('PEXPIRETIME', KEYS[1])
if t >= 0 and t <= tonumber(ARGV[1]) then return false end
return v
`);

// Run only after SET NX failed: replaces the value when the one there has expired at ARGV[2].
const REPLACE_IF_EXPIRED = script(`
local t = redis.call('PEXPIRETIME', KEYS[1])
if t == -1 or (t >= 0 and t > tonumber(ARGV[2])) then return 0 end
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
end
return 1
`);

/**
 * The Redis backend, for deployments that outgrow one machine: `SET key value NX PXAT t`, so a
 * concurrent second store of a key finds it and gets `exists`. Expired keys are removed by
 * Redis itself (its lazy and active expiry), so `sweep` has nothing to do. Durability is
 * Redis's: run it with `appendonly yes` and `appendfsync always` for the guarantee the SQLite
 * backend gives. Rejects when Redis cannot be reached within `connectTimeoutMs`; later
 * failures reject the request with BackendUnavailableError while the client reconnects.
 */
export async function createRedisBackend(options: RedisBackendOptions): Promise<StorageBackend> {
  const prefix = options.keyPrefix ?? 'storage:';
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const logger = options.logger;
  const started = Date.now();
  let everReady = false;
  let lastWarn = 0;

  const client = createClient({
    url: options.url,
    // Fail fast while disconnected (503) instead of queueing requests until a timeout.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: Math.min(connectTimeoutMs, 5_000),
      reconnectStrategy(retries) {
        if (!everReady && Date.now() - started >= connectTimeoutMs) return new Error(`redis unreachable after ${connectTimeoutMs} ms`);
        return Math.min(50 * 2 ** retries, 2_000);
      },
    },
  });
  client.on('error', (err: Error) => {
    const t = Date.now();
    if (t - lastWarn < 5_000) return;
    lastWarn = t;
    logger?.warn({ err: { message: err.message } }, 'redis connection error');
  });
  client.on('ready', () => {
    if (everReady) logger?.info('redis connection restored');
    everReady = true;
  });
  try {
    await client.connect();
  } catch (err) {
    if (client.isOpen) client.destroy();
    throw new BackendUnavailableError(`cannot connect to Redis (REDIS_URL): ${(err as Error).message}`, { cause: err });
  }

  async function call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new BackendUnavailableError('storage backend unavailable', { cause: err });
    }
  }

  async function evalScript(s: Script, key: string, args: string[]): Promise<unknown> {
    try {
      return await client.evalSha(s.sha, { keys: [key], arguments: args });
    } catch (err) {
      // First use on this Redis (or after SCRIPT FLUSH): send the source once, Redis caches it.
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return client.eval(s.source, { keys: [key], arguments: args });
      throw err;
    }
  }

  let closed = false;
  return {
    name: 'redis',
    put(key, value, ttlSeconds, now) {
      return call(async () => {
        const k = prefix + key;
        const at = expiresAt(now, ttlSeconds);
        const reply = await client.set(
          k,
          value,
          at === null ? { condition: 'NX' } : { condition: 'NX', expiration: { type: 'PXAT', value: at } },
        );
        if (reply === 'OK') return 'stored';
        const replaced = await evalScript(REPLACE_IF_EXPIRED, k, [value, String(now), at === null ? '' : String(at)]);
        return replaced === 1 ? 'stored' : 'exists';
      });
    },
    get(key, now) {
      return call(async () => {
        const reply = await evalScript(GET_LIVE, prefix + key, [String(now)]);
        return typeof reply === 'string' ? reply : undefined;
      });
    },
    async sweep() {
      return 0;
    },
    async ping() {
      await call(() => client.ping());
    },
    async close() {
      if (closed) return;
      closed = true;
      if (!client.isOpen) return;
      try {
        await client.close();
      } catch {
        client.destroy();
      }
    },
  };
}
