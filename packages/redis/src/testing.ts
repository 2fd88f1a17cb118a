/**
 * A Redis for test suites (imported as `@repo/redis/testing`, never by production code): the one
 * `REDIS_URL` names, or a `redis-server` started on a free loopback port. It speaks just enough
 * of RESP (the Redis protocol) itself, so a suite can check and clean a Redis without a client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';

/** A Redis for tests: the one `REDIS_URL` names, or a `redis-server` started here. */
export interface RedisHandle {
  url: string;
  /** `REDIS_URL`, or the `redis-server` binary started. */
  source: string;
  /** Deletes every key under `prefix` (a shared Redis is left as it was found). */
  cleanup(prefix: string): Promise<void>;
  /** Stops the redis-server started here (nothing for REDIS_URL). */
  stop(): Promise<void>;
}

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** Start redis-server with `appendonly yes`, `appendfsync always`, its files in this folder. */
  durableDir?: string;
}

const MISSING =
  'the Redis tests need a Redis server: set REDIS_URL (for example redis://127.0.0.1:6379), ' +
  'or put redis-server on PATH (Debian: apt-get install -y redis-server), or set REDIS_SERVER_BIN';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const resp = (args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/**
 * Sends `commands` (AUTH and SELECT first when the URL has a password or a database) and
 * resolves with the last reply's first line (`+PONG`, `:3`, `-ERR …`); rejects when the server
 * cannot be reached or does not answer within `timeoutMs`. Only for commands with one-line replies.
 */
export function redisCommand(url: string, commands: string[][], timeoutMs = 3_000): Promise<string> {
  const u = new URL(url);
  const pre: string[][] = [];
  if (u.password)
    pre.push(
      u.username ? ['AUTH', decodeURIComponent(u.username), decodeURIComponent(u.password)] : ['AUTH', decodeURIComponent(u.password)],
    );
  const db = u.pathname.replace(/^\//, '');
  if (db !== '') pre.push(['SELECT', db]);
  const all = [...pre, ...commands];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port || 6379), u.hostname.replace(/^\[|\]$/g, ''));
    let data = '';
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`redis at ${u.host} did not answer within ${timeoutMs} ms`)));
    socket.on('connect', () => socket.write(all.map(resp).join('')));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      const lines = data.split('\r\n');
      if (lines.length - 1 < all.length) return;
      socket.destroy();
      const failed = lines.slice(0, pre.length).find((l) => l.startsWith('-'));
      resolve(failed ?? lines[all.length - 1]!);
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`redis at ${u.host} closed the connection`)));
  });
}

async function pingOnce(port: number): Promise<boolean> {
  try {
    return (await redisCommand(`redis://127.0.0.1:${port}`, [['PING']], 500)).startsWith('+PONG');
  } catch {
    return false;
  }
}

// Deletes the keys under a prefix inside Redis (SCAN then DEL), so no reply needs parsing here.
const DELETE_BY_PREFIX = `
local cursor = '0'
local n = 0
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do n = n + redis.call('DEL', k) end
until cursor == '0'
return n
`;

async function deleteByPrefix(url: string, prefix: string): Promise<void> {
  const reply = await redisCommand(url, [['EVAL', DELETE_BY_PREFIX, '0', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`]], 30_000);
  if (reply.startsWith('-')) throw new Error(`deleting the test keys failed: ${reply}`);
}

function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function spawnRedis(bin: string, port: number, options: StartRedisOptions): Promise<ChildProcess> {
  // Tests: no RDB snapshots, no AOF, they need a live Redis, not its persistence. A durable
  // folder asks for an AOF fsynced before each reply, the durability SQLite gives.
  const persistence = options.durableDir
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.durableDir]
    : ['--appendonly', 'no'];
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--loglevel', 'warning'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const failed = new Promise<never>((_resolve, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`${MISSING}; starting "${bin}" failed: ${err.code ?? err.message}`)),
    );
    child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code} before answering: ${stderr.trim()}`)));
  });
  failed.catch(() => undefined);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const ready = await Promise.race([pingOnce(port), failed]);
    if (ready) return child;
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
}

/**
 * Gives the tests a Redis: `REDIS_URL` when set (it must answer PING), otherwise a
 * `redis-server` (from `REDIS_SERVER_BIN` or PATH) started on a free loopback port. Rejects with
 * a message saying what to install when neither is there: a Redis suite fails, it is never skipped.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisHandle> {
  const fromEnv = process.env.REDIS_URL?.trim();
  if (fromEnv) {
    let reply: string;
    try {
      reply = await redisCommand(fromEnv, [['PING']]);
    } catch (err) {
      reply = (err as Error).message;
    }
    if (!reply.startsWith('+PONG')) throw new Error(`REDIS_URL is set but its Redis does not answer PING (${reply}); ${MISSING}`);
    return { url: fromEnv, source: 'REDIS_URL', cleanup: (prefix) => deleteByPrefix(fromEnv, prefix), stop: async () => undefined };
  }
  const bin = process.env.REDIS_SERVER_BIN?.trim() || 'redis-server';
  let lastError: unknown;
  // Another process may take the free port between the probe and redis-server's bind: retry.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    let child: ChildProcess;
    try {
      child = await spawnRedis(bin, port, options);
    } catch (err) {
      lastError = err;
      if ((err as Error).message.startsWith('the Redis tests need')) throw err;
      continue;
    }
    const url = `redis://127.0.0.1:${port}`;
    return {
      url,
      source: bin,
      cleanup: (prefix) => deleteByPrefix(url, prefix),
      async stop() {
        child.kill('SIGTERM');
        await waitForExit(child);
      },
    };
  }
  throw lastError;
}
