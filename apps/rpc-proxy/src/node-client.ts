import { errorStatus, jsonArrayElements } from '@repo/json-rpc';
import { createNodeCredentials } from '@repo/node-auth';
import type { Logger } from '@repo/service';
import { createNodeConnections } from './node-connections';

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
  /**
   * Batches of {@link NodeClient.callBatched} in flight per path at most (0: no bound). Calls
   * that arrive while that many are in flight wait for one to come back and go together in the
   * next, so a busy node gets fewer, larger batches. Required: the proxy's setting
   * (NODE_BATCHES_IN_FLIGHT) must reach its client, not a default of this module.
   */
  batchesInFlight: number;
  /**
   * Once this many calls of a path are held behind its batches in flight, they go as one batch
   * more (at most `overlapBatches` beyond `batchesInFlight`), so that the node runs them while the
   * proxy answers the batch before (0: never). Required, as `batchesInFlight` (NODE_BATCH_OVERLAP_CALLS).
   */
  overlapCalls: number;
  /** Batches a path may have in flight beyond `batchesInFlight`, each of `overlapCalls` held calls or more (NODE_BATCH_OVERLAP_BATCHES). */
  overlapBatches: number;
  queueLimit: number;
  timeoutMs: number;
  logger: Logger;
  /**
   * Told of each call of {@link NodeClient.call} and {@link NodeClient.callBatched} once it ends:
   * its time from arrival (s) and how it failed (undefined: answered). The proxy's metrics.
   */
  observe?: (seconds: number, failure: NodeFailure | undefined) => void;
}

/** Forwards JSON-RPC bodies to bitcoind over keep-alive connections, at most N at once. */
export interface NodeClient {
  /** Sends `body` to `path`; rejects with a {@link NodeError} only. */
  call(path: string, body: string | Buffer): Promise<NodeReply>;
  /**
   * Sends one JSON-RPC call (`body`: a single request object, not a notification) to `path`,
   * in one HTTP request with the other calls to the same path that arrive in the same turn of
   * the event loop ({@link createNodeClient}); answers exactly what {@link call} would have.
   * `legacy`: the call is JSON-RPC 1.0 (Core answers its errors with HTTP 500, 404 or 400).
   */
  callBatched(path: string, body: Buffer, legacy: boolean): Promise<NodeReply>;
  /** HTTP requests that carried several calls gathered by {@link callBatched}, and those calls. */
  readonly batches: { requests: number; calls: number };
  /** Calls in flight, queued for a connection, held behind their path's batches, and the most ever in flight. */
  readonly stats: { active: number; queued: number; held: number; maxActive: number };
  /** The errno code (`EACCES`, `ENOENT`, …) of the last failed read of the node's cookie file; undefined when it was read. */
  cookieError(): string | undefined;
  close(): void;
}

const COOKIE_RECHECK_MS = 1_000;
/** Calls gathered into one HTTP request at most (Core runs a batch's calls one after the other on one RPC thread). */
export const MAX_BATCH_CALLS = 32;
/**
 * How the proxy's calls are gathered toward the node (docs/rpc-proxy.md, "Batching toward the
 * node"): one batch of a path out at a time, and up to three more, each once four calls wait
 * behind it (no more than Core's 16 RPC threads could run; a bound, not a setting).
 */
export const CALL_BATCHING = { batchesInFlight: 1, overlapCalls: 4, overlapBatches: 3 } as const;
/** Bodies larger than this go alone (a batch is built by concatenation). */
const MAX_BATCHED_BODY = 16 * 1024;
/** How Core starts the reply object of a failed JSON-RPC 1.0 call: `{"result":null,"error":{`. */
const LEGACY_ERROR_PREFIX = Buffer.from('{"result":null,"error":{');
/** The failure of a call with no room left to wait (NODE_QUEUE_LIMIT). */
const QUEUE_FULL = 'proxy queue full: too many requests waiting for the node';

/** A call waiting for the end of the event loop's turn to be sent with others. */
interface Gathered {
  body: Buffer;
  legacy: boolean;
  /** Held behind its path's batches in flight: counted as waiting (NODE_QUEUE_LIMIT) until sent. */
  held: boolean;
  /** When it arrived (performance.now()); its `timeoutMs` runs from then. */
  arrived: number;
  /** Answered or failed: a batch's answer after it timed out is dropped. */
  settled: boolean;
  resolve: (reply: NodeReply) => void;
  reject: (err: NodeError) => void;
}

/** The headers of every call to the node (its Authorization added when there is one). */
const JSON_REQUEST_HEADERS: readonly string[] = ['Content-Type', 'application/json'];
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

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

/**
 * Creates the node client on kept-alive connections of its own, one exchange each at a time,
 * read by Node's HTTP parser (src/node-http.ts; undici's Pool where Node has no such parser
 * binding): cheaper per call than undici or `http.request`. Calls beyond `maxConcurrency`
 * wait in a FIFO queue here, never at the connections (bitcoind itself answers 503 past its
 * -rpcworkqueue, so the proxy queues instead of overrunning it); past `queueLimit` waiting, a
 * call fails at once with kind `queue`. Each call has `timeoutMs` in all, from its arrival: the
 * time it waits for a connection or behind its path's batch counts, and a call whose time runs out
 * while it waits fails without being sent. The timers are one an exchange, not one a call
 * ({@link sendGathered}).
 */
export function createNodeClient(options: NodeClientOptions): NodeClient {
  // Our own timer bounds the whole call; bitcoind closes idle connections after 30 s.
  const connections = createNodeConnections({ url: options.url, connections: options.maxConcurrency, keepAliveMs: 20_000 });
  const stats = { active: 0, queued: 0, held: 0, maxActive: 0 };
  const batches = { requests: 0, calls: 0 };
  const waiting: (() => void)[] = [];
  /** Calls of callBatched by path, sent at the end of this turn of the event loop. */
  const gathered = new Map<string, Gathered[]>();
  let flushScheduled = false;
  /** Exchanges of callBatched in flight, by path. */
  const inFlight = new Map<string, number>();
  const holdLimit = options.batchesInFlight;
  /** Room for one more call to wait, queued for a connection or held behind its path's batches. */
  const roomToWait = () => stats.queued + stats.held < options.queueLimit;
  /** The path has `batchesInFlight` batches out: its calls are held until one comes back. */
  const pathFull = (path: string) => holdLimit > 0 && (inFlight.get(path) ?? 0) >= holdLimit;
  /**
   * Whether a batch of `size` calls of `path` may go now: within `batchesInFlight` (0: no bound),
   * or as one of the `overlapBatches` beyond it once it carries `overlapCalls` calls or more.
   */
  const mayGo = (path: string, size: number) => {
    const out = inFlight.get(path) ?? 0;
    if (holdLimit === 0 || out < holdLimit) return true;
    return options.overlapCalls > 0 && size >= options.overlapCalls && out < holdLimit + options.overlapBatches;
  };

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
    if (!roomToWait()) return false;
    stats.queued++;
    waiting.push(start);
    return true;
  }

  const timedOutError = () => new NodeError('timeout', `node timed out after ${options.timeoutMs} ms`);

  function release(): void {
    const next = waiting.shift();
    if (next) {
      stats.queued--;
      next();
    } else stats.active--;
  }

  /** One HTTP exchange, failed with `timeout` at `deadline` (performance.now()); `done` is called exactly once. */
  function send(
    path: string,
    body: string | Buffer,
    deadline: number,
    retried: { reset: boolean; auth: boolean },
    done: (err: NodeError | undefined, reply?: NodeReply) => void,
  ): void {
    const auth = authorization();
    const headers = auth === undefined ? JSON_REQUEST_HEADERS : [...JSON_REQUEST_HEADERS, 'Authorization', auth];
    let timedOut = false;
    let finished = false;
    // Out of time before it could go (it waited for a slot, or is a retry): fails unsent.
    const left = deadline - performance.now();
    if (left <= 0) {
      done(timedOutError());
      return;
    }
    const timer = setTimeout(() => {
      timedOut = true;
      abort();
      finish(timedOutError());
    }, left);

    function finish(err: NodeError | undefined, reply?: NodeReply): void {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done(err, reply);
    }

    const abort = connections.request(path, headers, body, {
      onComplete(status, buf) {
        if (status === 401 || status === 403) {
          if (!retried.auth && credentials.refreshAfterRefusal()) {
            clearTimeout(timer);
            finished = true;
            send(path, body, deadline, { ...retried, auth: true }, done);
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
      onError(code, answering, unsent) {
        if (finished) return;
        if (timedOut) return finish(timedOutError());
        if (answering) return finish(new NodeError('unreachable', 'node unreachable (connection closed mid-answer)'));
        // A kept-alive connection the node closed while idle: the request never reached it, send again once.
        if (unsent && !retried.reset) {
          clearTimeout(timer);
          finished = true;
          send(path, body, deadline, { ...retried, reset: true }, done);
          return;
        }
        finish(new NodeError('unreachable', `node unreachable (${code})`));
      },
    });
  }

  /**
   * One HTTP exchange in a slot (waiting for one when all are busy), failed with `timeout` at
   * `deadline` (performance.now()). The queue needs no timer of its own: it is FIFO and every
   * call of this client has the same `timeoutMs`, so what holds the slots arrived earlier and
   * frees them by its own deadline, before this one's; `send` fails it unsent if none is left.
   */
  function exchange(
    path: string,
    body: string | Buffer,
    deadline: number,
    done: (err: NodeError | undefined, reply?: NodeReply) => void,
  ): void {
    const queued = acquire(() =>
      send(path, body, deadline, { reset: false, auth: false }, (err, reply) => {
        release();
        done(err, reply);
      }),
    );
    if (!queued) done(new NodeError('queue', QUEUE_FULL));
  }

  const observe = options.observe;

  function call(path: string, body: string | Buffer): Promise<NodeReply> {
    const arrived = performance.now();
    return new Promise<NodeReply>((resolve, reject) =>
      exchange(path, body, arrived + options.timeoutMs, (err, reply) => {
        observe?.((performance.now() - arrived) / 1000, err?.kind);
        if (err) reject(err);
        else resolve(reply as NodeReply);
      }),
    );
  }

  /** When a gathered call's `timeoutMs` runs out (performance.now()). */
  const deadlineOf = (c: Gathered): number => c.arrived + options.timeoutMs;

  /** Answers a gathered call, once. */
  function answer(c: Gathered, reply: NodeReply): void {
    if (c.settled) return;
    c.settled = true;
    observe?.((performance.now() - c.arrived) / 1000, undefined);
    c.resolve(reply);
  }

  /** Fails a gathered call, once. */
  function fail(c: Gathered, err: NodeError): void {
    if (c.settled) return;
    c.settled = true;
    observe?.((performance.now() - c.arrived) / 1000, err.kind);
    c.reject(err);
  }

  /**
   * The reply Core gives a call sent alone, from its element `bytes[start, end)` of a batch reply:
   * the same object and newline; HTTP 200, or for a failed JSON-RPC 1.0 call the status of its error
   * code (docs/rpc-proxy.md, "Bitcoin Core behaviour"). Undefined when the element is not what Core writes.
   */
  function replyOf(bytes: Buffer, start: number, end: number, legacy: boolean): NodeReply | undefined {
    let status = 200;
    if (
      legacy &&
      end - start >= LEGACY_ERROR_PREFIX.length &&
      LEGACY_ERROR_PREFIX.compare(bytes, start, start + LEGACY_ERROR_PREFIX.length) === 0
    ) {
      let code: unknown;
      try {
        code = (JSON.parse(bytes.toString('utf8', start, end)) as { error?: { code?: unknown } }).error?.code;
      } catch {
        return undefined;
      }
      if (typeof code !== 'number') return undefined;
      status = errorStatus(code, { id: { value: null }, version: '1.0' });
    }
    const body = Buffer.allocUnsafe(end - start + 1);
    bytes.copy(body, 0, start, end);
    body[end - start] = 0x0a;
    return { status, body };
  }

  /**
   * Sends the calls gathered so far, per path: one alone as it is, several as batches of up to
   * MAX_BATCH_CALLS, as many as {@link mayGo} lets out (so a path never has more than
   * `batchesInFlight + overlapBatches` out, however many calls arrive in a turn). The rest wait,
   * counted as held, for a batch of their path to come back.
   */
  function flush(): void {
    flushScheduled = false;
    for (const [path, calls] of gathered) {
      let sent = 0;
      while (sent < calls.length) {
        const size = Math.min(MAX_BATCH_CALLS, calls.length - sent);
        if (!mayGo(path, size)) break;
        const batch = calls.slice(sent, sent + size);
        sent += size;
        for (const c of batch) if (c.held) stats.held--;
        sendGathered(path, batch);
      }
      if (sent === calls.length) {
        gathered.delete(path);
        continue;
      }
      const rest = sent === 0 ? calls : calls.slice(sent);
      for (const c of rest) {
        if (c.held) continue;
        c.held = true;
        stats.held++;
      }
      gathered.set(path, rest);
    }
  }

  function scheduleFlush(): void {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(flush);
  }

  /**
   * One exchange of gathered calls on `path`, counted in flight until it ends (at the latest at
   * `deadline`, the last of its calls'); held calls of the path go next.
   */
  function exchangeGathered(
    path: string,
    body: Buffer,
    deadline: number,
    done: (err: NodeError | undefined, reply?: NodeReply) => void,
  ): void {
    inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
    exchange(path, body, deadline, (err, reply) => {
      const left = (inFlight.get(path) ?? 1) - 1;
      if (left === 0) inFlight.delete(path);
      else inFlight.set(path, left);
      if (gathered.has(path)) scheduleFlush();
      done(err, reply);
    });
  }

  /**
   * Sends `calls` of `path`: one alone as it is, several as one batch. Each call fails at its own
   * deadline: the exchange's timer runs to the last of them, and one timer a batch fails the
   * earlier ones on the way (their elements of the answer are then dropped). No call needs a timer
   * of its own while it is held: what holds it is batches of calls that arrived before it, which
   * end by their deadlines, before its own (every call of this client has the same `timeoutMs`).
   */
  function sendGathered(path: string, calls: Gathered[]): void {
    if (calls.length === 1) {
      const [only] = calls as [Gathered];
      exchangeGathered(path, only.body, deadlineOf(only), (err, reply) => (err ? fail(only, err) : answer(only, reply as NodeReply)));
      return;
    }
    const parts: Buffer[] = [];
    for (const c of calls) parts.push(parts.length === 0 ? OPEN : COMMA, c.body);
    parts.push(CLOSE);
    // Calls arrive in order, so the last one's deadline is the latest, the first one's the earliest.
    const last = deadlineOf(calls[calls.length - 1] as Gathered);
    let expiry: NodeJS.Timeout | undefined;
    const expireDue = () => {
      const now = performance.now();
      let next = Number.POSITIVE_INFINITY;
      for (const c of calls) {
        if (c.settled) continue;
        const deadline = deadlineOf(c);
        if (deadline <= now) fail(c, timedOutError());
        else if (deadline < next) next = deadline;
      }
      expiry = next < last ? setTimeout(expireDue, next - now) : undefined;
    };
    const first = deadlineOf(calls[0] as Gathered);
    if (first < last) expiry = setTimeout(expireDue, first - performance.now());
    exchangeGathered(path, Buffer.concat(parts), last, (err, reply) => {
      if (expiry !== undefined) clearTimeout(expiry);
      if (err) {
        for (const c of calls) fail(c, err);
        return;
      }
      const { status, body } = reply as NodeReply;
      // Each element's bytes are cut out of the reply, never decoded (docs/rpc-proxy.md, "Batching toward the node").
      const bounds = status === 200 ? jsonArrayElements(body) : undefined;
      const replies: (NodeReply | undefined)[] | undefined =
        bounds?.length === 2 * calls.length
          ? calls.map((c, i) => replyOf(body, bounds[2 * i] as number, bounds[2 * i + 1] as number, c.legacy))
          : undefined;
      if (replies === undefined || replies.some((r) => r === undefined)) {
        // Not the batch reply Core gives. Never sent again: a write may have run.
        for (const c of calls)
          fail(c, new NodeError('garbage', `node answered garbage (HTTP ${status}, batch reply does not match the request)`));
        return;
      }
      batches.requests++;
      batches.calls += calls.length;
      calls.forEach((c, i) => answer(c, replies[i] as NodeReply));
    });
  }

  return {
    call,
    callBatched(path, body, legacy) {
      if (body.length > MAX_BATCHED_BODY) return call(path, body);
      return new Promise<NodeReply>((resolve, reject) => {
        const held = pathFull(path);
        if (held && !roomToWait()) {
          observe?.(0, 'queue');
          reject(new NodeError('queue', QUEUE_FULL));
          return;
        }
        if (held) stats.held++;
        let list = gathered.get(path);
        if (list === undefined) gathered.set(path, (list = []));
        list.push({ body, legacy, held, arrived: performance.now(), settled: false, resolve, reject });
        scheduleFlush();
      });
    },
    batches,
    stats,
    cookieError: () => credentials.cookieError(),
    close() {
      connections.close();
    },
  };
}
