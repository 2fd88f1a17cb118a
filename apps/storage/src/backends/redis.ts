import { createHash } from 'node:crypto';
import { connectRedis } from '@repo/redis';
import { withDeadline, type Logger } from '@repo/service';
import { BackendUnavailableError, expiresAt, type StorageBackend, type WriteRefusal } from './backend';

/** Options of {@link createRedisBackend}. */
export interface RedisBackendOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. Never logged (it may hold a password). */
  url: string;
  /** Prefix of every key written (default `storage:`). */
  keyPrefix?: string;
  /** Give up connecting at start after this many ms (default 10000). */
  connectTimeoutMs?: number;
  /**
   * A request whose command is not answered in this many ms fails (default 5000): a Redis that
   * hangs (stopped, swapping, a network that drops packets) answers 503 rather than holding the
   * request to its 408. The command may still run when Redis resumes; its late reply is matched
   * to it and dropped (node-redis's own `timeout` only covers commands not yet written).
   */
  commandTimeoutMs?: number;
  logger?: Logger;
}

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

// Layout (docs/storage.md, "Write tokens"): a value stored with a write token is a hash under
// REDIS_KEY_PREFIX + key with the fields `v` (the value, hex) and `w` (SHA-256 of the token,
// hex); a value stored by a version from before write tokens is a plain string (the value,
// hex), which reads still serve and which has no token, so it cannot be deleted or touched.
//
// Expiry is Redis's own (PEXPIREAT on the key), computed from the caller's clock; these
// scripts also treat a value whose expiry instant has passed on that clock as gone, so both
// backends agree on what "expired at now" means even when the Redis host's clock lags behind.
// PEXPIRETIME (Redis 7.0): -1 no expiry, -2 no key, else the expiry in ms since the epoch.
// Each script runs atomically: no other command runs between its reads and its writes.

// ARGV: now. Answers {value, expiry} or nil.
const GET_LIVE = script(`
local t = redis.call('PEXPIRETIME', KEYS[1])
if t == -2 or (t >= 0 and t <= tonumber(ARGV[1])) then return false end
local kind = redis.call('TYPE', KEYS[1])['ok']
local v
if kind == 'hash' then v = redis.call('HGET', KEYS[1], 'v') elseif kind == 'string' then v = redis.call('GET', KEYS[1]) end
if not v then return false end
return {v, t}
`);

// ARGV: value, now, expiry ('' for never), token hash. 1 stored, 0 a live value holds the key
// (one that has expired on the caller's clock, but not yet on Redis's, is replaced).
const PUT = script(`
local t = redis.call('PEXPIRETIME', KEYS[1])
if t == -1 or t > tonumber(ARGV[2]) then return 0 end
if t ~= -2 then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'w', ARGV[4])
if ARGV[3] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1
`);

// Shared by DELETE and TOUCH (ARGV[1] now, ARGV[2] the offered token hash): nil when the live
// value may be changed, else why not. The hashes are compared byte by byte without an early
// exit, so the time taken does not depend on where they differ.
const AUTHORIZE = `
local function authorize()
  local t = redis.call('PEXPIRETIME', KEYS[1])
  if t == -2 or (t >= 0 and t <= tonumber(ARGV[1])) then return 'not_found' end
  if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then return 'no_token' end
  local w = redis.call('HGET', KEYS[1], 'w')
  if not w then return 'no_token' end
  local offered = ARGV[2]
  if #w ~= #offered then return 'forbidden' end
  local diff = 0
  for i = 1, #w do diff = bit.bor(diff, bit.bxor(string.byte(w, i), string.byte(offered, i))) end
  if diff ~= 0 then return 'forbidden' end
  return nil
end
`;

// ARGV: now, token hash. 'deleted' or the refusal.
const DELETE = script(`${AUTHORIZE}
local refused = authorize()
if refused then return refused end
redis.call('DEL', KEYS[1])
return 'deleted'
`);

// ARGV: now, token hash, new expiry ('' for never). 'touched' or the refusal.
const TOUCH = script(`${AUTHORIZE}
local refused = authorize()
if refused then return refused end
if ARGV[3] == '' then redis.call('PERSIST', KEYS[1]) else redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 'touched'
`);

/** Commands waiting for Redis at most (see `commandsQueueMaxLength`). */
export const MAX_QUEUED_COMMANDS = 10_000;

const REFUSALS: ReadonlySet<unknown> = new Set<WriteRefusal>(['not_found', 'no_token', 'forbidden']);

function refusal(reply: unknown, what: string): WriteRefusal {
  if (REFUSALS.has(reply)) return reply as WriteRefusal;
  throw new Error(`unexpected reply of the ${what} script: ${String(reply)}`);
}

/**
 * The Redis backend, for deployments that outgrow one machine: every operation is one Lua
 * script (EVALSHA), so a concurrent second store of a key finds it and gets `exists`, and a
 * delete or a touch checks the token and changes the value in one step. Expired keys are removed by
 * Redis itself (its lazy and active expiry), so `sweep` has nothing to do. Durability is
 * Redis's: run it with `appendonly yes` and `appendfsync always` for the guarantee the SQLite
 * backend gives. Rejects when Redis cannot be reached within `connectTimeoutMs`; later
 * failures reject the request with BackendUnavailableError while the client reconnects.
 */
export async function createRedisBackend(options: RedisBackendOptions): Promise<StorageBackend> {
  const prefix = options.keyPrefix ?? 'storage:';
  const client = await connectRedis({
    url: options.url,
    connectTimeoutMs: options.connectTimeoutMs,
    logger: options.logger,
    // Fail fast while disconnected (503) instead of queueing requests until a timeout.
    disableOfflineQueue: true,
    // Commands a hung Redis has not answered stay queued until it does (their late replies are
    // matched to them): past this many, new ones fail at once (503) instead of growing the queue.
    commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
  });

  const commandTimeoutMs = options.commandTimeoutMs ?? 5_000;
  async function call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(run(), commandTimeoutMs, `no answer from Redis within ${commandTimeoutMs} ms`);
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
    put(key, value, ttlSeconds, now, tokenHash) {
      return call(async () => {
        const at = expiresAt(now, ttlSeconds);
        const reply = await evalScript(PUT, prefix + key, [value, String(now), at === null ? '' : String(at), tokenHash.toString('hex')]);
        return reply === 1 ? 'stored' : 'exists';
      });
    },
    get(key, now) {
      return call(async () => {
        const reply = await evalScript(GET_LIVE, prefix + key, [String(now)]);
        if (!Array.isArray(reply)) return undefined;
        const [value, expiry] = reply as [string, number];
        return { value, expiresAt: expiry < 0 ? null : expiry };
      });
    },
    delete(key, tokenHash, now) {
      return call(async () => {
        const reply = await evalScript(DELETE, prefix + key, [String(now), tokenHash.toString('hex')]);
        return reply === 'deleted' ? 'deleted' : refusal(reply, 'delete');
      });
    },
    touch(key, tokenHash, ttlSeconds, now) {
      return call(async () => {
        const at = expiresAt(now, ttlSeconds);
        const reply = await evalScript(TOUCH, prefix + key, [String(now), tokenHash.toString('hex'), at === null ? '' : String(at)]);
        return reply === 'touched' ? { expiresAt: at } : refusal(reply, 'touch');
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
