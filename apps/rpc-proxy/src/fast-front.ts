import { maxHeaderSize as processMaxHeaderSize, STATUS_CODES, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { ANSWERED_EVENT, type AnsweredExchange } from '@repo/api-contract';
import { loadHttpParser } from './llhttp';
import { announcedLength, createLlhttpHeadReader, readPlainHead, type RequestHead } from './request-head';

/**
 * The proxy's front end for JSON-RPC calls (docs/rpc-proxy.md, "The front end"): on each
 * connection of the `node:http` server, a request that arrives whole (head and body in what has
 * been read) and is a plain JSON-RPC POST is answered here, without `node:http`'s request and
 * response streams; any other request, and everything after it on its connection, is handed to
 * `node:http` with the bytes read so far. The head is read by hand when it is written in a
 * narrow subset of HTTP/1.1, and by Node's own HTTP parser (llhttp, with the server's settings)
 * otherwise, two ways tested to read alike (src/request-head.ts), so a request means here what it
 * means to `node:http`; whatever is not the plain case (a partial request, a chunked
 * body, `Expect`, an upgrade, HTTP/1.0, a repeated header, a parse error, another method or
 * path) goes to `node:http`, which answers as it always has.
 */

/** A request read whole by the front end: what the JSON-RPC handler reads of a request. */
export class FastRequest {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    readonly socket: Socket,
    /** The whole body, already read. */
    readonly body: Buffer,
  ) {}

  /** Nothing left to read (the body is in hand). */
  resume(): void {}
}

/** The answer to a {@link FastRequest}: one write of head and body on the connection. */
export class FastResponse {
  #answered = false;
  #written = false;
  #close = false;

  /** `connection.write` writes the answer and says whether it could (false: the client had gone). */
  constructor(private readonly connection: { write: AnswerWriter }) {}

  /** True once the answer is written (false when the client left before it: as node:http's `headersSent`). */
  get headersSent(): boolean {
    return this.#written;
  }

  /** The connection is closed after this answer (`Connection: close`). */
  closeAfter(): void {
    this.#close = true;
  }

  /**
   * Writes the answer, once: `headers` a flat name/value list (no `Date` or `Connection`: the
   * front end adds `Date` as `node:http` does, and `Connection: close` when the connection ends
   * after it), `body` with its Content-Length among `headers` (none for 204).
   */
  answer(status: number, headers: readonly string[], body: string | Buffer): void {
    if (this.#answered) return;
    this.#answered = true;
    this.#written = this.connection.write(status, headers, body, this.#close);
  }
}

/** Writes the answer to the request being served on a connection; false when the client had gone. */
type AnswerWriter = (status: number, headers: readonly string[], body: string | Buffer, close: boolean) => boolean;

/** The handler of the requests the front end serves (the JSON-RPC handler). */
export type FastHandler = (req: FastRequest, res: FastResponse) => void;

/** The front end's counters (tests, the bench). */
export interface FastFrontStats {
  /** Requests answered by the front end. */
  served: number;
  /** Connections handed to `node:http`. */
  handedOff: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** Answers with a body up to this long are written as one latin1 string (below Node's 16 KiB for a write from the stack). */
const SHORT_BODY = 8 * 1024;
/** Keep-alive timeouts below this are sent to the client as a `Keep-Alive: timeout=` hint (see keptHeadEnd). */
const HINTED_KEEP_ALIVE_MS = 5_000;
/** Bytes of pipelined requests kept while one is answered; past it the connection stops being read until then. */
const MAX_PENDING = 64 * 1024;

/** One request read whole. */
interface Parsed extends RequestHead {
  body: Buffer;
}

/** A connection the front end is serving. */
interface Connection {
  socket: Socket;
  /** Bytes read and not yet served (from the start of a request). */
  pending: Buffer | undefined;
  /** A request was served on it (its idle time is then the keep-alive's, not the headers deadline's). */
  served: boolean;
  /** When it opened, or its last answer went (performance.now()). */
  idleSince: number;
  /** The request being served: its answer is being prepared, and the next request waits. */
  request: Parsed | undefined;
  /** Writes the answer to `request` (one function a connection, not one a request). */
  write: AnswerWriter;
  onData: (chunk: Buffer) => void;
  onEnd: () => void;
  onError: () => void;
  onClose: () => void;
}

/** Date header value, as node:http writes it, built once a second. */
let dateSecond = -1;
let dateText = '';
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

type NodeServer = Server & {
  connectionsCheckingInterval?: number;
  maxHeaderSize?: number;
  insecureHTTPParser?: boolean;
  requireHostHeader?: boolean;
};

/**
 * Puts the front end in front of `server`'s own connection handling: each new connection is
 * read here first. `serves(method, url)` says which requests `handler` takes (the rest go to
 * `node:http`). Returns its counters, or undefined when it is not installed (this Node has no
 * parser binding as expected, the server or Node is set to a lenient parser, or the server has
 * no `node:http` connection listener), in which case `node:http` serves everything as before.
 *
 * It takes part in the server's shutdown (`close()`, `closeIdleConnections()`,
 * `closeAllConnections()`): once `close()` is called, an answer it writes says
 * `Connection: close` and ends its connection, idle connections are closed; the server's
 * `headersTimeout` (408, through the server's `clientError` listeners) and `keepAliveTimeout`
 * apply to its connections as to `node:http`'s.
 */
export function installFastFront(
  server: Server,
  serves: (method: string, url: string) => boolean,
  handler: FastHandler,
): FastFrontStats | undefined {
  const binding = loadHttpParser();
  const nodeServer = server as NodeServer;
  if (binding === undefined || nodeServer.insecureHTTPParser === true || binding.isLenient()) return undefined;
  const found = server.listeners('connection').find((l) => l.name === 'connectionListener');
  if (found === undefined) return undefined;
  const nodeListener = found as (this: Server, socket: Socket) => void;
  const stats: FastFrontStats = { served: 0, handedOff: 0 };
  const open = new Set<Connection>();
  let closing = false;
  let sweeper: NodeJS.Timeout | undefined;

  const readWithLlhttp = createLlhttpHeadReader(binding);

  /**
   * The request at the start of `bytes`: 'partial' when it has not all arrived, 'other' when it
   * is not one the front end serves, else the request and its length.
   */
  function parseOne(bytes: Buffer): { request: Parsed; length: number } | 'partial' | 'other' {
    // The server's own limit, else this process's (--max-http-header-size), as node:http takes it.
    const maxHeaderSize = nodeServer.maxHeaderSize || processMaxHeaderSize;
    const headEnd = bytes.indexOf(HEAD_END);
    if (headEnd < 0) return bytes.length > maxHeaderSize ? 'other' : 'partial';
    // The plainest heads are read by hand (src/request-head.ts), and say their body's length.
    const plain = headEnd + 4 <= maxHeaderSize ? readPlainHead(bytes, headEnd) : undefined;
    // Else the length the head announces; llhttp checks it below: what it reads must end exactly there.
    const length = headEnd + 4 + (plain === undefined ? announcedLength(bytes, headEnd) : plain.bodyLength);
    if (Number.isNaN(length)) return 'other';
    if (bytes.length < length) return 'partial';
    const head = plain ?? readWithLlhttp(length === bytes.length ? bytes : bytes.subarray(0, length), maxHeaderSize);
    if (head === undefined || !serves(head.method, head.url)) return 'other';
    // node:http answers an HTTP/1.1 request without Host 400 itself (requireHostHeader, on by default).
    if (head.headers.host === undefined && nodeServer.requireHostHeader !== false) return 'other';
    const body = bytes.subarray(headEnd + 4, length);
    return { request: { method: head.method, url: head.url, headers: head.headers, body, keepAlive: head.keepAlive }, length };
  }

  /** Gives the connection to node:http with the bytes not yet served; it is node:http's from then on. */
  function handOff(c: Connection): void {
    stats.handedOff++;
    const { socket } = c;
    socket.pause();
    forget(c);
    socket.off('error', c.onError);
    if (c.pending !== undefined && c.pending.length > 0) socket.unshift(c.pending);
    c.pending = undefined;
    nodeListener.call(server, socket);
    // Paused above (a paused stream keeps what is read, and unshifted, for node:http's own listener).
    socket.resume();
  }

  /** The front end is done with the connection: no more reading from it here (its error listener stays until hand-off). */
  function forget(c: Connection): void {
    const { socket } = c;
    socket.off('data', c.onData);
    socket.off('end', c.onEnd);
    socket.off('close', c.onClose);
    open.delete(c);
    if (open.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  /** Serves the requests read so far, one at a time, in order; hands the connection off at the first it does not serve. */
  function drain(c: Connection): void {
    while (c.request === undefined && c.pending !== undefined && !c.socket.destroyed) {
      const outcome = parseOne(c.pending);
      // The rest of a request the front end stopped reading (MAX_PENDING) is on its way: read on.
      if (outcome === 'partial' && c.socket.isPaused()) {
        c.socket.resume();
        return;
      }
      if (outcome === 'partial' || outcome === 'other') {
        handOff(c);
        return;
      }
      const { request, length } = outcome;
      c.pending = length === c.pending.length ? undefined : c.pending.subarray(length);
      dispatch(c, request);
    }
    if (c.socket.isPaused() && c.request === undefined && !c.socket.destroyed) c.socket.resume();
  }

  function dispatch(c: Connection, request: Parsed): void {
    c.request = request;
    handler(new FastRequest(request.method, request.url, request.headers, c.socket, request.body), new FastResponse(c));
  }

  /** Writes the answer to the request `c` is serving, then serves the next one read (Connection: the request's, or close). */
  function writeAnswer(c: Connection, status: number, headers: readonly string[], body: string | Buffer, closeAfter: boolean): boolean {
    const { socket, request } = c;
    if (request === undefined || socket.destroyed || !socket.writable) return false;
    const close = closeAfter || closing || !request.keepAlive;
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    for (let i = 0; i + 1 < headers.length; i += 2) head += `${headers[i] as string}: ${headers[i + 1] as string}\r\n`;
    head += `Date: ${httpDate()}\r\n`;
    head += close ? 'Connection: close\r\n\r\n' : keptHeadEnd();
    if (typeof body === 'string') socket.write(head + body);
    // A short body's bytes as latin1 text (one character a byte: written back as the same bytes),
    // in one string with the head: Node writes a short string from the stack, with no buffer made.
    else if (body.length <= SHORT_BODY) socket.write(head + body.toString('latin1'), 'latin1');
    else socket.write(withHead(head, body));
    stats.served++;
    if (server.listenerCount(ANSWERED_EVENT) > 0) server.emit(ANSWERED_EVENT, answered(request, head, status, body));
    c.request = undefined;
    c.served = true;
    c.idleSince = performance.now();
    if (close) {
      forget(c);
      socket.end();
      return true;
    }
    // Answers the client is not reading: the next request waits until they are sent.
    if (socket.writableNeedDrain) socket.once('drain', () => drain(c));
    else drain(c);
    return true;
  }

  /** The keep-alive timeout that {@link keptHeadEnd}'s text was made for. */
  let keepAliveFor: number | undefined;
  let keptEnd = '\r\n';
  /**
   * The end of the head of an answer whose connection stays open: no `Connection` line, as
   * Bitcoin Core writes its own (the front end serves HTTP/1.1 only, whose connections persist
   * unless one side says close: RFC 9112, section 9.3), and a `Keep-Alive: timeout=` hint only
   * when the server's keep-alive timeout is not a second longer than what clients assume without
   * one (undici, behind Node's `fetch`: 4 s idle), so that none of them sends on a connection the
   * proxy has closed. The proxy's own (30 s, as Core's -rpcservertimeout) needs
   * none. Each header line costs every client a parse (docs/performance/rpc-proxy.md,
   * "Twenty-fourth round"). Made again only when the server's timeout changes.
   */
  function keptHeadEnd(): string {
    const timeout = server.keepAliveTimeout;
    if (timeout !== keepAliveFor) {
      keepAliveFor = timeout;
      keptEnd = timeout > 0 && timeout < HINTED_KEEP_ALIVE_MS ? `Keep-Alive: timeout=${Math.floor(timeout / 1000)}\r\n\r\n` : '\r\n';
    }
    return keptEnd;
  }

  /** Node's deadlines for the front end's idle connections: the headers deadline before the first request, then the keep-alive's. */
  function sweep(): void {
    const now = performance.now();
    const headersTimeout = Math.min(...[server.headersTimeout, server.requestTimeout].filter((t) => t > 0));
    for (const c of open) {
      if (c.request !== undefined) continue;
      if (!c.served && Number.isFinite(headersTimeout) && now - c.idleSince >= headersTimeout) {
        forget(c);
        requestTimedOut(c.socket);
      } else if (c.served && server.keepAliveTimeout > 0 && now - c.idleSince >= server.keepAliveTimeout) {
        forget(c);
        c.socket.destroy();
      }
    }
  }

  /** As node:http does when the headers deadline passes: a `clientError` the server's listeners answer (408). */
  function requestTimedOut(socket: Socket): void {
    if (server.listenerCount('clientError') === 0) {
      socket.destroy();
      return;
    }
    const err: NodeJS.ErrnoException = new Error('Request timeout');
    err.code = 'ERR_HTTP_REQUEST_TIMEOUT';
    server.emit('clientError', err, socket);
  }

  function accept(this: Server, socket: Socket): void {
    if (closing) {
      nodeListener.call(this, socket);
      return;
    }
    const c: Connection = {
      socket,
      pending: undefined,
      served: false,
      idleSince: performance.now(),
      request: undefined,
      write: (status, headers, body, close) => writeAnswer(c, status, headers, body, close),
      onData: (chunk) => {
        c.pending = c.pending === undefined ? chunk : Buffer.concat([c.pending, chunk]);
        if (c.request === undefined) drain(c);
        else if (c.pending.length > MAX_PENDING) socket.pause();
      },
      // The client's FIN: as node:http (its httpAllowHalfOpen is off), what it asked is dropped
      // unanswered (counted with status 0) and the connection ended.
      onEnd: () => {
        forget(c);
        socket.end();
      },
      onError: () => socket.destroy(),
      onClose: () => forget(c),
    };
    open.add(c);
    sweeper ??= setInterval(sweep, Math.max(50, Math.min(1_000, nodeServer.connectionsCheckingInterval ?? 1_000))).unref();
    socket.on('data', c.onData);
    socket.on('end', c.onEnd);
    socket.on('error', c.onError);
    socket.on('close', c.onClose);
  }

  // The front end takes node:http's place among the server's connection listeners.
  server.removeListener('connection', nodeListener);
  server.prependListener('connection', accept);

  // Shutdown (@repo/service closeGracefully): its idle connections close with node:http's.
  const close = server.close.bind(server);
  const closeIdle = server.closeIdleConnections.bind(server);
  const closeAll = server.closeAllConnections.bind(server);
  const closeIdleFast = () => {
    for (const c of open) if (c.request === undefined) c.socket.destroy();
  };
  server.close = (callback?: (err?: Error) => void) => {
    closing = true;
    closeIdleFast();
    return close(callback);
  };
  server.closeIdleConnections = () => {
    closeIdle();
    closeIdleFast();
  };
  server.closeAllConnections = () => {
    closeAll();
    for (const c of open) c.socket.destroy();
  };
  return stats;
}

/** The head (latin1 text: status line and headers) and the body in one buffer: one write, one copy of the body. */
function withHead(head: string, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(head.length + body.length);
  out.write(head, 0, 'latin1');
  body.copy(out, head.length);
  return out;
}

/** The exchange for a contract recorder (ANSWERED_EVENT of @repo/api-contract), which reads the headers from `head`. */
function answered(request: Parsed, head: string, status: number, body: string | Buffer): AnsweredExchange {
  const path = request.url.split('?')[0] ?? '/';
  return { method: request.method, path, requestBody: request.body, status, head, body: Buffer.from(body), complete: true };
}
