import { connect, type Socket } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { loadHttpParser, type HttpParser, type HttpParserBinding } from './llhttp';

/** What one exchange with the node reports: exactly one of the two, once. */
export interface ExchangeHandler {
  /** The node's whole answer (a final status, 200 and up). */
  onComplete(status: number, body: Buffer): void;
  /**
   * The exchange failed. `code`: the socket's error code (ECONNREFUSED, ECONNRESET, …) or the
   * parser's (HPE_…); `answering`: the node's answer had begun (its status line was read);
   * `unsent`: the request went out on a kept-alive connection the node had closed meanwhile,
   * which it gave back closed before a byte of an answer: the request never reached the node.
   */
  onError(code: string, answering: boolean, unsent: boolean): void;
}

/** HTTP/1.1 exchanges with the node over kept-alive connections, one exchange each at a time. */
export interface NodeConnections {
  /**
   * Sends `POST path` with `headers` (name/value pairs; Host and Content-Length are added) and
   * `body`; returns the exchange's abort: its connection is closed and `handler` hears nothing more.
   */
  request(path: string, headers: readonly string[], body: string | Buffer, handler: ExchangeHandler): () => void;
  /** Closes every connection; exchanges in flight fail (`closed`). */
  close(): void;
}

/** Options of {@link createNodeConnections}. */
export interface NodeConnectionsOptions {
  url: URL;
  /** Connections at most (undici's pool only; the client never has more exchanges in flight). */
  connections: number;
  /** An idle connection is closed after this long (below bitcoind's -rpcservertimeout, 30 s). */
  keepAliveMs: number;
}

/** A request path the node may be sent: `/` and then visible Latin-1 characters only (undici's rule). */
const SENDABLE_PATH = /^\/[\x21-\xff]*$/;

/**
 * The client's connections to the node: its own, on Node's HTTP parser (llhttp reads each
 * answer: Content-Length, chunked, or to the connection's close), one buffer written a request;
 * an undici Pool when this Node has no parser binding as expected (or `kind` asks for it: the
 * tests hold both to the same behaviour). The node is the only peer;
 * an answer that is not HTTP, or anything after an answer it did not ask for, closes the connection.
 */
export function createNodeConnections(options: NodeConnectionsOptions, kind: 'llhttp' | 'undici' = 'llhttp'): NodeConnections {
  const binding = kind === 'llhttp' ? loadHttpParser() : undefined;
  return binding === undefined ? undiciConnections(options) : ownConnections(options, binding);
}

/** One connection to the node and the exchange it carries. */
interface Connection {
  socket: Socket;
  parser: HttpParser;
  /** The exchange in flight. */
  handler: ExchangeHandler | undefined;
  /** Exchanges completed on it: a connection that carried one may have been closed by the node since. */
  used: number;
  /** Bytes of the node's answer read for the exchange in flight. */
  read: number;
  status: number;
  keepAlive: boolean;
  chunks: Buffer[];
  /** The exchange's whole answer, once read: handed over when the bytes read so far are all parsed. */
  answer: { status: number; body: Buffer } | undefined;
  /** Closed, or being closed: never taken again. */
  dead: boolean;
  /** When it was last left idle (performance.now()). */
  idleSince: number;
}

function ownConnections(options: NodeConnectionsOptions, binding: HttpParserBinding): NodeConnections {
  const { HTTPParser } = binding;
  const { url } = options;
  const host = url.host;
  const port = Number(url.port || 80);
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const idle: Connection[] = [];
  const all = new Set<Connection>();
  const resource = {};
  /**
   * Idle connections are closed once idle `keepAliveMs` (a quarter of it later at most), by one
   * sweep while any connection is open: a timer a connection, set and cleared with each exchange,
   * cost more than the rest of an exchange's bookkeeping. One idle that long is never taken.
   */
  let sweeper: NodeJS.Timeout | undefined;
  const idleTooLong = (c: Connection, now: number) => now - c.idleSince >= options.keepAliveMs;
  function sweep(): void {
    const now = performance.now();
    for (const c of [...idle]) if (idleTooLong(c, now)) kill(c);
  }

  /** Ends the exchange in flight with `outcome` (once) and leaves the connection idle or closed. */
  function settle(c: Connection, outcome: (h: ExchangeHandler) => void, reuse: boolean): void {
    const { handler } = c;
    c.handler = undefined;
    c.chunks = [];
    c.read = 0;
    c.status = 0;
    c.answer = undefined;
    if (reuse && !c.dead) {
      c.used++;
      c.idleSince = performance.now();
      idle.push(c);
    } else kill(c);
    if (handler !== undefined) outcome(handler);
  }

  function kill(c: Connection): void {
    c.dead = true;
    c.socket.destroy();
    const at = idle.indexOf(c);
    if (at >= 0) idle.splice(at, 1);
  }

  /** The exchange failed with the connection: the answer cut short, or none at all. */
  function fail(c: Connection, code: string): void {
    if (c.handler === undefined) {
      kill(c);
      return;
    }
    const answering = c.status >= 200;
    const unsent = c.used > 0 && c.read === 0;
    settle(c, (h) => h.onError(code, answering, unsent), false);
  }

  function open(): Connection {
    const socket = connect({ port, host: hostname, noDelay: true });
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.RESPONSE, resource, 0, HTTPParser.kLenientNone);
    const c: Connection = {
      socket,
      parser,
      handler: undefined,
      used: 0,
      read: 0,
      status: 0,
      keepAlive: true,
      chunks: [],
      answer: undefined,
      dead: false,
      idleSince: 0,
    };
    // A byte of another answer after the exchange's own, or with none asked: the connection is
    // not to be trusted with the next exchange (the node only ever answers what it was asked).
    parser[HTTPParser.kOnMessageBegin] = () => {
      if (c.answer !== undefined || c.handler === undefined) c.dead = true;
    };
    parser[HTTPParser.kOnHeadersComplete] = (
      _major: number,
      _minor: number,
      _headers: unknown,
      _method: unknown,
      _url: unknown,
      status: number,
      _message: unknown,
      _upgrade: boolean,
      keepAlive: boolean,
    ) => {
      c.status = status;
      c.keepAlive = keepAlive;
      return 0;
    };
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => {
      c.chunks.push(chunk);
    };
    parser[HTTPParser.kOnMessageComplete] = () => {
      const { status } = c;
      if (status < 200) {
        // 100 Continue and the like: the answer follows.
        c.status = 0;
        c.chunks = [];
        return;
      }
      // The exchange's answer is the first; what follows it only condemns the connection (kOnMessageBegin).
      if (c.answer !== undefined) return;
      c.answer = { status, body: c.chunks.length === 1 ? (c.chunks[0] as Buffer) : Buffer.concat(c.chunks) };
      c.chunks = [];
    };
    /** Hands the exchange its answer once what was read is all parsed (so nothing after it goes unseen). */
    const deliver = () => {
      const { answer } = c;
      if (answer !== undefined) settle(c, (h) => h.onComplete(answer.status, answer.body), c.keepAlive && !c.dead);
    };
    socket.on('data', (data: Buffer) => {
      if (c.handler === undefined) {
        // Bytes while no request is out.
        kill(c);
        return;
      }
      c.read += data.length;
      const result = parser.execute(data);
      if (typeof result !== 'number') fail(c, result.code ?? 'HPE_INVALID');
      else deliver();
    });
    socket.on('end', () => {
      c.dead = true;
      // An answer that runs to the connection's close ends here; any other is cut short. (An
      // answer read whole was handed over with the bytes that ended it.)
      if (c.handler !== undefined) {
        const result = parser.finish();
        if (result === undefined) deliver();
        if (c.handler !== undefined) fail(c, result?.code ?? 'ECONNRESET');
      }
      kill(c);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => fail(c, err.code ?? err.message));
    socket.on('close', () => {
      fail(c, 'ECONNRESET');
      all.delete(c);
      parser.close();
      if (all.size === 0 && sweeper !== undefined) {
        clearInterval(sweeper);
        sweeper = undefined;
      }
    });
    all.add(c);
    sweeper ??= setInterval(sweep, Math.max(1, options.keepAliveMs / 4)).unref();
    return c;
  }

  return {
    request(path, headers, body, handler) {
      if (!SENDABLE_PATH.test(path)) {
        handler.onError('ERR_INVALID_PATH', false, false);
        return () => undefined;
      }
      const now = performance.now();
      let c = idle.pop();
      while (c !== undefined && (c.dead || c.socket.destroyed || idleTooLong(c, now))) {
        if (!c.dead) kill(c);
        c = idle.pop();
      }
      if (c === undefined) c = open();
      c.handler = handler;
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      let head = `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
      for (let i = 0; i + 1 < headers.length; i += 2) head += `${headers[i] as string}: ${headers[i + 1] as string}\r\n`;
      head += `Content-Length: ${length}\r\n\r\n`;
      const out = Buffer.allocUnsafe(Buffer.byteLength(head, 'latin1') + length);
      const at = out.write(head, 0, 'latin1');
      if (typeof body === 'string') out.write(body, at, 'utf8');
      else body.copy(out, at);
      c.socket.write(out);
      const taken = c;
      return () => {
        if (taken.handler !== handler) return;
        taken.handler = undefined;
        kill(taken);
      };
    },
    close() {
      // Each connection closed; an exchange in flight fails.
      for (const c of all) fail(c, 'closed');
    },
  };
}

/** Error codes of a connection the node closed or reset (undici wraps them in UND_ERR_SOCKET). */
function undiciCode(err: Error): string {
  const { code, cause } = err as Error & { code?: string };
  if (code === 'UND_ERR_SOCKET') return (cause as { code?: string } | undefined)?.code ?? 'ECONNRESET';
  return code ?? err.message;
}

/** The same exchanges on an undici Pool (one request per connection at a time, kept alive). */
function undiciConnections(options: NodeConnectionsOptions): NodeConnections {
  const pool = new Pool(options.url.origin, {
    connections: options.connections,
    pipelining: 1,
    // The client's own timer bounds each call.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: options.keepAliveMs,
    keepAliveMaxTimeout: options.keepAliveMs + 5_000,
  });
  return {
    request(path, headers, body, handler) {
      let status = 0;
      let done = false;
      let abort: ((err?: Error) => void) | undefined;
      const chunks: Buffer[] = [];
      const once = (f: () => void) => {
        if (!done) {
          done = true;
          f();
        }
      };
      const dispatch: Dispatcher.DispatchHandlers = {
        onConnect(a) {
          abort = a;
          if (done) a();
        },
        onHeaders(statusCode) {
          status = statusCode;
          return true;
        },
        onData(chunk) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          once(() => handler.onComplete(status, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
        },
        onError(err: Error & { code?: string; socket?: { bytesRead?: number } }) {
          const unsent = err.code === 'UND_ERR_SOCKET' && (err.socket?.bytesRead ?? 0) > 0 && status === 0;
          once(() => handler.onError(undiciCode(err), status >= 200, unsent));
        },
      };
      const list: Record<string, string> = {};
      for (let i = 0; i + 1 < headers.length; i += 2) list[(headers[i] as string).toLowerCase()] = headers[i + 1] as string;
      try {
        pool.dispatch({ origin: options.url.origin, path, method: 'POST', headers: list, body }, dispatch);
      } catch (err) {
        once(() => handler.onError(undiciCode(err as Error), false, false));
      }
      return () => {
        done = true;
        abort?.();
      };
    },
    close() {
      void pool.destroy().catch(() => undefined);
    },
  };
}
