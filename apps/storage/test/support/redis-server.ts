import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { createClient } from 'redis';

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

function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setTimeout(500, () => socket.destroy());
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) {
        socket.destroy();
        resolve(data.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(false));
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function spawnRedis(bin: string, port: number, options: StartRedisOptions): Promise<ChildProcess> {
  // Tests: no RDB snapshots, no AOF, they need a live Redis, not its persistence. The
  // benchmark asks for an AOF fsynced before each reply, the durability SQLite gives.
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

async function deleteByPrefix(url: string, prefix: string): Promise<void> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    await client.close();
  }
}

/** Fails at once, with a message, when the Redis of REDIS_URL does not answer PING. */
async function assertAnswers(url: string): Promise<void> {
  const client = createClient({ url, socket: { connectTimeout: 3_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new Error(`REDIS_URL is set but its Redis does not answer PING (${(err as Error).message}); ${MISSING}`);
  } finally {
    if (client.isOpen) client.destroy();
  }
}

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** Start redis-server with `appendonly yes`, `appendfsync always`, its files in this folder. */
  durableDir?: string;
}

/**
 * Gives the tests a Redis: `REDIS_URL` when set, otherwise a `redis-server` (from
 * `REDIS_SERVER_BIN` or PATH) started on a free loopback port. Rejects with a message saying
 * what to install when neither is there: the Redis suite fails, it is never skipped.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisHandle> {
  const fromEnv = process.env.REDIS_URL?.trim();
  if (fromEnv) {
    await assertAnswers(fromEnv);
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

/**
 * For a suite run against `backend`: starts Redis before the suite when it is `redis` (and
 * stops it, with this suite's keys removed, after), and returns the environment the service
 * needs for that backend. A key prefix per suite keeps a shared REDIS_URL clean and runs apart.
 */
export function useBackend(backend: 'sqlite' | 'redis'): () => Record<string, string> {
  let redis: RedisHandle | undefined;
  const prefix = `storage-test:${randomBytes(6).toString('hex')}:`;
  beforeAll(async () => {
    if (backend === 'redis') redis = await startRedis();
  });
  afterAll(async () => {
    if (redis) {
      await redis.cleanup(prefix);
      await redis.stop();
    }
  });
  return () => ({ STORAGE_BACKEND: backend, ...(redis ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix } : {}) });
}
