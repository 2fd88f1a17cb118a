/**
 * Test support for services built on this package (imported as `@repo/http/testing`, never by
 * production code).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * Opens a TCP connection to `port` on the loopback and waits `settleMs`: resolves with the socket
 * and whether the server closed it at once (a connection cap refusing it).
 */
export function openConnection(port: number, settleMs = 100, localAddress?: string): Promise<{ socket: Socket; closedAtOnce: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress !== undefined ? { localAddress } : {}) });
    socket.once('error', reject);
    socket.once('connect', () => {
      const timer = setTimeout(() => resolve({ socket, closedAtOnce: false }), settleMs);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve({ socket, closedAtOnce: true });
      });
    });
  });
}

/** What {@link rawExchange} saw. */
export interface RawExchange {
  /** Status of the first response line (0 when none came). */
  status: number;
  /** Everything after the head (the body as sent; chunked framing left in). */
  body: string;
  /** The whole response text. */
  text: string;
  /** ms from the first byte written to the first response byte (or to the end). */
  ms: number;
  /** Whether the server closed the connection. */
  closed: boolean;
}

/**
 * Writes `request` (raw bytes, for malformed or slow requests) to `127.0.0.1:port`, optionally from
 * `localAddress` (another loopback address, 127.0.0.2 for instance, to be another client), and
 * resolves once a whole response came (its `Content-Length`), the server closed, or `timeoutMs` passed.
 */
export function rawExchange(
  port: number,
  request: string | Buffer,
  options: { localAddress?: string; timeoutMs?: number } = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect({
      port,
      host: '127.0.0.1',
      ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}),
    });
    let data = Buffer.alloc(0);
    let first = 0;
    const start = Date.now();
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const text = data.toString('utf8');
      const head = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      socket.destroy();
      resolve({
        status: status === undefined ? 0 : Number(status),
        body: head >= 0 ? text.slice(head + 4) : '',
        text,
        ms: (first || Date.now()) - start,
        closed,
      });
    };
    const timer = setTimeout(() => done(false), options.timeoutMs ?? 5_000);
    socket.on('error', () => done(true));
    socket.on('close', () => done(true));
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      if (first === 0) first = Date.now();
      data = Buffer.concat([data, chunk]);
      const text = data.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head))?.[1];
      if (length !== undefined && data.length >= head + 4 + Number(length)) done(false);
    });
  });
}

/**
 * Opens `count` connections from `localAddress` that each announce a body of `announced` bytes and send
 * one byte of it (a slow client holding a slot); `extraHeaders` are whole header lines (`Name: value\r\n`). Resolves with the sockets the server kept open.
 */
export async function holdSlowConnections(
  port: number,
  count: number,
  localAddress: string,
  path = '/',
  announced = 100_000,
  extraHeaders = '',
): Promise<Socket[]> {
  const kept: Socket[] = [];
  const opened = await Promise.all(Array.from({ length: count }, () => openConnection(port, 50, localAddress).catch(() => undefined)));
  for (const o of opened) {
    if (o === undefined) continue;
    if (o.closedAtOnce) continue;
    o.socket.on('error', () => undefined);
    // Read what the server answers, so a refusal (an answer and a close) is seen here.
    o.socket.resume();
    o.socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extraHeaders}Content-Length: ${announced}\r\n\r\n[`,
    );
    kept.push(o.socket);
  }
  // The server may accept (and refuse) the last ones later than the client saw them connect.
  await new Promise((r) => setTimeout(r, 300));
  return kept.filter((s) => !s.destroyed);
}

// ---- Redis for tests ---------------------------------------------------------------------------
// Moved here from apps/storage so the storage and relay suites share one way to get a Redis. It
// speaks just enough of RESP (the Redis protocol) itself, so this package needs no Redis client.

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

/** A TCP forwarder in front of a real server, whose link a test can break in the ways a network or a host does. */
export interface TcpForwarder {
  /** The loopback port it listens on (the same after {@link TcpForwarder.up}). */
  readonly port: number;
  /** Destroys every forwarded connection and, still listening, closes new ones at once (a partition). */
  cut(): void;
  /** Forwards new connections again after {@link TcpForwarder.cut}. */
  restore(): void;
  /** Destroys every connection and stops listening: the server is unreachable (connection refused). */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Holds every byte in both directions: the server hangs (as a stopped process would). */
  pause(): void;
  /** Lets the held bytes and the later ones through again. */
  resume(): void;
  close(): Promise<void>;
}

/** Starts a {@link TcpForwarder} on a free loopback port to `target` (host default 127.0.0.1). */
export async function startTcpForwarder(target: { host?: string; port: number }): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let paused = false;
  let cut = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (paused) socket.pause();
  };
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        track(client);
        if (cut) {
          client.destroy();
          return;
        }
        const upstream = connect(target.port, target.host ?? '127.0.0.1');
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const destroyAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  const down = async () => {
    const s = server;
    server = undefined;
    destroyAll();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await open();
  return {
    get port() {
      return port;
    },
    cut() {
      cut = true;
      destroyAll();
    },
    restore() {
      cut = false;
    },
    down,
    up: open,
    pause() {
      paused = true;
      for (const socket of sockets) socket.pause();
    },
    resume() {
      paused = false;
      for (const socket of sockets) socket.resume();
    },
    close: down,
  };
}
