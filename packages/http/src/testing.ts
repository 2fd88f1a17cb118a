/**
 * Test support for services built on this package (imported as `@repo/http/testing`, never by
 * production code).
 */
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
