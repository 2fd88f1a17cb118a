import { Pool, type Dispatcher } from 'undici';
import { createNodeCredentials } from '@repo/node-auth';
import type { Logger } from '@repo/service';

/** Why a node call failed (each becomes -32603 with a message saying which). */
export type NodeFailure = 'unreachable' | 'timeout' | 'garbage' | 'busy' | 'auth' | 'cookie' | 'queue';

/** A node call that failed; `message` is what the client reads. */
export class NodeError extends Error {
  override readonly name = 'NodeError';
  constructor(
    readonly kind: NodeFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A JSON answer of the node: its status and exact bytes. The body is checked to be a JSON
 * object or array by its first and last characters only ({@link looksLikeJson}); callers
 * that need the value parse it themselves ({@link parseReply}), so answers that pass
 * through untouched are never parsed.
 */
export interface NodeReply {
  status: number;
  body: Buffer;
}

/** Options of {@link createNodeClient}. */
export interface NodeClientOptions {
  url: URL;
  user?: string;
  password?: string;
  /** bitcoind's cookie file, re-read when it changes (a restarted node writes a new one). */
  cookieFile?: string;
  maxConcurrency: number;
  queueLimit: number;
  timeoutMs: number;
  logger: Logger;
}

/** Forwards JSON-RPC bodies to bitcoind over keep-alive connections, at most N at once. */
export interface NodeClient {
  /** Sends `body` to `path`; rejects with a {@link NodeError} only. */
  call(path: string, body: string | Buffer): Promise<NodeReply>;
  readonly stats: { active: number; queued: number; maxActive: number };
  /** The errno code (`EACCES`, `ENOENT`, …) of the last failed read of the node's cookie file; undefined when it was read. */
  cookieError(): string | undefined;
  close(): void;
}

const COOKIE_RECHECK_MS = 1_000;

/** True for JSON whitespace (space, tab, LF, CR). */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * A cheap shape check of a node answer: its first and last non-blank characters are `{`…`}`
 * or `[`…`]`. It tells a JSON-RPC reply from what a wrong service on the port sends (an
 * HTML page, plain text, an empty body) without parsing megabytes of block JSON.
 */
export function looksLikeJson(body: Buffer): boolean {
  let i = 0;
  let j = body.length - 1;
  while (i <= j && isSpace(body[i])) i++;
  while (j >= i && isSpace(body[j])) j--;
  if (j <= i) return false;
  const first = body[i];
  const last = body[j];
  return (first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d);
}

/** The parsed value of a reply (an object or array); throws NodeError `garbage` when it is not JSON. */
export function parseReply(reply: NodeReply): unknown {
  try {
    return JSON.parse(reply.body.toString('utf8')) as unknown;
  } catch {
    throw new NodeError('garbage', `node answered garbage (HTTP ${reply.status}, not JSON)`);
  }
}

/** Error codes of a connection the node closed or reset (undici wraps them in UND_ERR_SOCKET). */
function errorCode(err: Error): string {
  const { code, cause } = err as Error & { code?: string };
  if (code === 'UND_ERR_SOCKET') return (cause as { code?: string } | undefined)?.code ?? 'ECONNRESET';
  return code ?? err.message;
}

/**
 * Creates the node client on an undici Pool (one request per connection at a time, kept
 * alive): cheaper per call than `http.request` with an Agent. Calls beyond `maxConcurrency`
 * wait in a FIFO queue here, never in the pool (bitcoind itself answers 503 past its
 * -rpcworkqueue, so the proxy queues instead of overrunning it); past `queueLimit` waiting, a
 * call fails at once with kind `queue`. Each call has one timer of `timeoutMs` in all.
 */
export function createNodeClient(options: NodeClientOptions): NodeClient {
  const pool = new Pool(options.url.origin, {
    connections: options.maxConcurrency,
    pipelining: 1,
    // Our own timer bounds the whole call; bitcoind closes idle connections after 30 s.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 20_000,
    keepAliveMaxTimeout: 25_000,
  });
  const stats = { active: 0, queued: 0, maxActive: 0 };
  const waiting: (() => void)[] = [];

  const credentials = createNodeCredentials({
    user: options.user,
    password: options.password,
    cookieFile: options.cookieFile,
    cookieSetting: 'BITCOIND_COOKIE_FILE',
    who: 'proxy',
    logger: options.logger,
    recheckMs: COOKIE_RECHECK_MS,
  });
  const authorization = () => credentials.authorization();

  /** Runs `start` at once when a slot is free, else when one frees up (FIFO); false when the queue is full. */
  function acquire(start: () => void): boolean {
    if (stats.active < options.maxConcurrency) {
      stats.active++;
      if (stats.active > stats.maxActive) stats.maxActive = stats.active;
      start();
      return true;
    }
    if (waiting.length >= options.queueLimit) return false;
    stats.queued++;
    waiting.push(start);
    return true;
  }

  function release(): void {
    const next = waiting.shift();
    if (next) {
      stats.queued--;
      next();
    } else stats.active--;
  }

  /** One HTTP exchange; `done` is called exactly once. */
  function send(
    path: string,
    body: string | Buffer,
    retried: { reset: boolean; auth: boolean },
    done: (err: NodeError | undefined, reply?: NodeReply) => void,
  ): void {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const auth = authorization();
    if (auth !== undefined) headers.authorization = auth;
    let status = 0;
    let headersSeen = false;
    let timedOut = false;
    let finished = false;
    let abort: ((err?: Error) => void) | undefined;
    let chunk: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      if (abort) abort(new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`));
      else finish(new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);

    function finish(err: NodeError | undefined, reply?: NodeReply): void {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done(err, reply);
    }

    const handler: Dispatcher.DispatchHandlers = {
      onConnect(a) {
        abort = a;
        if (timedOut) a(new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`));
      },
      onHeaders(statusCode) {
        status = statusCode;
        headersSeen = statusCode >= 200;
        return true;
      },
      onData(c) {
        if (chunk === undefined) chunk = c;
        else (chunks ??= [chunk]).push(c);
        return true;
      },
      onComplete() {
        const buf = chunks ? Buffer.concat(chunks) : (chunk ?? Buffer.alloc(0));
        if (status === 401 || status === 403) {
          if (!retried.auth && credentials.refreshAfterRefusal()) {
            clearTimeout(timer);
            finished = true;
            send(path, body, { ...retried, auth: true }, done);
            return;
          }
          const refusal = credentials.refusal(status);
          return finish(new NodeError(refusal.kind, refusal.message));
        }
        if (status === 503) return finish(new NodeError('busy', 'node busy: work queue depth exceeded (HTTP 503)'));
        if (status === 204 && buf.length === 0) return finish(undefined, { status, body: buf });
        if (!looksLikeJson(buf)) return finish(new NodeError('garbage', `node answered garbage (HTTP ${status}, not JSON)`));
        finish(undefined, { status, body: buf });
      },
      onError(err: Error & { code?: string; socket?: { bytesRead?: number } }) {
        if (finished) return;
        if (timedOut || err instanceof NodeError) return finish(new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`));
        if (headersSeen) return finish(new NodeError('unreachable', 'node unreachable (connection closed mid-answer)'));
        const code = errorCode(err);
        // A kept-alive connection the node closed while idle: the request never reached it, send again once.
        if (err.code === 'UND_ERR_SOCKET' && (err.socket?.bytesRead ?? 0) > 0 && !retried.reset) {
          clearTimeout(timer);
          finished = true;
          send(path, body, { ...retried, reset: true }, done);
          return;
        }
        finish(new NodeError('unreachable', `node unreachable (${code})`));
      },
    };
    try {
      pool.dispatch({ origin: options.url.origin, path, method: 'POST', headers, body }, handler);
    } catch (err) {
      finish(new NodeError('unreachable', `node unreachable (${errorCode(err as Error)})`));
    }
  }

  return {
    call(path, body) {
      return new Promise<NodeReply>((resolve, reject) => {
        const queued = acquire(() =>
          send(path, body, { reset: false, auth: false }, (err, reply) => {
            release();
            if (err) reject(err);
            else resolve(reply as NodeReply);
          }),
        );
        if (!queued) reject(new NodeError('queue', 'proxy queue full: too many requests waiting for the node'));
      });
    },
    stats,
    cookieError: () => credentials.cookieError(),
    close() {
      void pool.destroy().catch(() => undefined);
    },
  };
}
