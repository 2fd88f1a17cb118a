import { STATUS_CODES } from 'node:http';
import { Socket, type Server } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError, toErrorRecord, type ErrorCode } from '@repo/errors';
import { throttledLog, type Logger } from '@repo/service';

/** Renders the body of a protocol-level error in the service's own error record. */
export type ProtocolErrorBody = (error: AppError) => unknown;

/** The flat error record `{error, code, details?}` (the default). */
export const flatErrorBody: ProtocolErrorBody = (error) => toErrorRecord(error);

/** Maps Node's HTTP parser errors to a status and code (431 for headers over `maxHeaderSize`). */
export function classifyClientError(code: string | undefined): { code: ErrorCode; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', message: 'request headers too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: 'request timeout: headers or body not received in time' };
    default:
      return { code: 'INVALID_REQUEST', message: 'malformed HTTP request' };
  }
}

interface MaybeHttpSocket extends Duplex {
  remoteAddress?: string;
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * Whether a `clientError` is a TLS failure before the handshake was done (the handshake deadline,
 * a malformed ClientHello, plain HTTP sent to an HTTPS port): an https server hands those to
 * `clientError` too, and no HTTP answer can go over TLS on a connection without it.
 */
function isTlsFailure(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
}

/** OpenSSL's verdict on a connection whose first bytes were an HTTP request, not a ClientHello. */
const PLAIN_HTTP_ON_TLS = 'ERR_SSL_HTTP_REQUEST';

/**
 * The TCP connection under a TLS socket, while it can still be written: Node keeps it as the
 * TLS socket's `_parent` (not in its typings). Undefined for anything else.
 */
function tcpUnder(socket: Duplex): Socket | undefined {
  const parent = (socket as { _parent?: unknown })._parent;
  return parent instanceof Socket && parent.writable ? parent : undefined;
}

/** Options of {@link answerProtocolErrors} (and of `guardServer`, which passes them on). */
export interface ProtocolErrorOptions {
  /** The service's error record (default {@link flatErrorBody}). */
  errorBody?: ProtocolErrorBody;
  /** Where refusals are logged. */
  logger?: Logger;
  /** Headers the service puts on every response, written on these answers too (none by default). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * Answers protocol-level errors (a bad request line or header, headers too large, a header or
 * body deadline passed) with a minimal HTTP/1.1 response carrying the service's error record and
 * `Connection: close`, instead of Node's bare 400/431 or a silent close. Nothing is written when
 * the socket is gone or a response has already started on it (RFC 9112, section 9.6), and a
 * connection whose TLS handshake failed is closed at once (an answer written there would wait,
 * unsent, for the 2 s a client that never reads is given). The one exception is a plain HTTP
 * request on an HTTPS port: the client reads plain HTTP, so it gets 400 `INVALID_REQUEST` in
 * plain HTTP on the TCP connection (as nginx answers it) instead of an empty reply.
 *
 * These requests never reach the request log, so each refusal is logged here at `info` (the
 * client's address, what was answered or that the connection was closed, Node's error code), at
 * most one line a second: a line counts the refusals it stood for (`refusals`), so a flood of bad
 * requests cannot flood the log. A client that went away (`ECONNRESET`) is not logged.
 */
export function answerProtocolErrors(server: Server, options: ProtocolErrorOptions = {}): void {
  const body = options.errorBody ?? flatErrorBody;
  const { logger, headers = {} } = options;
  const log = throttledLog((fields, message) => logger?.info(fields, message), { everyMs: 1_000, countAs: 'refusals' });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: MaybeHttpSocket) => {
    const tcp = err.code === PLAIN_HTTP_ON_TLS ? tcpUnder(socket) : undefined;
    const ip = socket.remoteAddress ?? tcp?.remoteAddress;
    if (tcp !== undefined) {
      const error = new AppError('INVALID_REQUEST', { message: 'plain HTTP sent to a TLS port: connect with https:// or wss://' });
      log({ ip, status: error.status, code: error.code, error: err.code }, `protocol error answered: ${error.message}`);
      answerOnSocket(tcp, error, body, headers);
      return;
    }
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    // Bytes after a request that said `Connection: close` (RFC 9112, section 9.6: the server reads
    // no more and closes after its answer) are no malformed request: the answer in progress goes
    // out and ends the connection.
    if (err.code === 'HPE_CLOSED_CONNECTION' && socket._httpMessage) return;
    if (isTlsFailure(err.code)) {
      log({ ip, error: err.code }, 'TLS handshake failed: connection closed');
      socket.destroy();
      return;
    }
    if (!socket.writable || socket._httpMessage?.headersSent === true) {
      socket.destroy();
      return;
    }
    const { code, message } = classifyClientError(err.code);
    const error = new AppError(code, { message });
    log({ ip, status: error.status, code, error: err.code }, `protocol error answered: ${message}`);
    answerOnSocket(socket, error, body, headers);
  });
}

/**
 * Writes an error answer straight on a socket that has no response object (a protocol error, a
 * `CONNECT`): a minimal HTTP/1.1 response with the error record, `headers` and
 * `Connection: close`, then the socket is closed; a client that never reads it is cut after 2 s.
 */
export function answerOnSocket(
  socket: Duplex,
  error: AppError,
  body: ProtocolErrorBody = flatErrorBody,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body(error));
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    'Connection: close',
  ].join('\r\n');
  socket.on('error', () => socket.destroy());
  socket.end(`${head}\r\n\r\n${text}`);
  setTimeout(() => socket.destroy(), 2_000).unref();
}
