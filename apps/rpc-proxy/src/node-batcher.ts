import { errorStatus, jsonArrayElements } from '@repo/json-rpc';
import { NodeError, type NodeReply } from './node-reply';
import { QUEUE_FULL, type ExchangeDone, type NodeExchanges } from './node-exchanges';

/** Calls gathered into one HTTP request at most (Core runs a batch's calls one after the other on one RPC thread). */
export const MAX_BATCH_CALLS = 32;
/** How Core starts the reply object of a failed JSON-RPC 1.0 call: `{"result":null,"error":{`. */
const LEGACY_ERROR_PREFIX = Buffer.from('{"result":null,"error":{');
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

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

/**
 * The reply Core gives a call sent alone, from its element `bytes[start, end)` of a batch reply:
 * the same object and newline; HTTP 200, or for a failed JSON-RPC 1.0 call the status of its error
 * code (docs/rpc-proxy.md, "Bitcoin Core behaviour"). Undefined when the element is not what Core writes.
 */
function replyOf(bytes: Buffer, start: number, end: number, legacy: boolean): NodeReply | undefined {
  let status = 200;
  const prefix = LEGACY_ERROR_PREFIX.length;
  if (legacy && end - start >= prefix && LEGACY_ERROR_PREFIX.compare(bytes, start, start + prefix) === 0) {
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

/** The replies of `count` calls cut out of a batch reply (never decoded); undefined when it is not the batch reply Core gives. */
function splitBatchReply(reply: NodeReply, calls: Gathered[]): NodeReply[] | undefined {
  const bounds = reply.status === 200 ? jsonArrayElements(reply.body) : undefined;
  if (bounds?.length !== 2 * calls.length) return undefined;
  const replies: NodeReply[] = [];
  for (const [i, c] of calls.entries()) {
    const r = replyOf(reply.body, bounds[2 * i] as number, bounds[2 * i + 1] as number, c.legacy);
    if (r === undefined) return undefined;
    replies.push(r);
  }
  return replies;
}

/**
 * Single calls that arrive in the same turn of the event loop go to the node together, one
 * JSON-RPC batch per path (docs/rpc-proxy.md, "Batching toward the node"): at most
 * `batchesInFlight` batches of a path out, plus up to `overlapBatches` more once `overlapCalls`
 * calls are held behind them; the rest are held (counted as waiting) until one comes back. Each
 * call fails at its own deadline: the exchange's timer runs to the last of them, and one timer a
 * batch fails the earlier ones on the way.
 */
export class CallBatcher {
  readonly batches = { requests: 0, calls: 0 };
  /** Calls by path, sent at the end of this turn of the event loop. */
  readonly #gathered = new Map<string, Gathered[]>();
  /** Exchanges in flight, by path. */
  readonly #inFlight = new Map<string, number>();
  #flushScheduled = false;

  constructor(readonly exchanges: NodeExchanges) {}

  /** Sends one call (`body`, a single request object) with the others of this turn; answers what a call alone would get. */
  call(path: string, body: Buffer, legacy: boolean): Promise<NodeReply> {
    return new Promise<NodeReply>((resolve, reject) => {
      const held = this.#pathFull(path);
      if (held && !this.exchanges.roomToWait()) {
        this.exchanges.observe(performance.now(), 'queue');
        reject(new NodeError('queue', QUEUE_FULL));
        return;
      }
      if (held) this.exchanges.stats.held++;
      let list = this.#gathered.get(path);
      if (list === undefined) this.#gathered.set(path, (list = []));
      list.push({ body, legacy, held, arrived: performance.now(), settled: false, resolve, reject });
      this.#scheduleFlush();
    });
  }

  #deadlineOf(c: Gathered): number {
    return c.arrived + this.exchanges.options.timeoutMs;
  }

  /** The path has `batchesInFlight` batches out: its calls are held until one comes back. */
  #pathFull(path: string): boolean {
    const limit = this.exchanges.options.batchesInFlight;
    return limit > 0 && (this.#inFlight.get(path) ?? 0) >= limit;
  }

  /** Whether a batch of `size` calls of `path` may go now: within `batchesInFlight` (0: no bound), or as one of the `overlapBatches` beyond it. */
  #mayGo(path: string, size: number): boolean {
    const { batchesInFlight, overlapCalls, overlapBatches } = this.exchanges.options;
    const out = this.#inFlight.get(path) ?? 0;
    if (batchesInFlight === 0 || out < batchesInFlight) return true;
    return overlapCalls > 0 && size >= overlapCalls && out < batchesInFlight + overlapBatches;
  }

  #answer(c: Gathered, reply: NodeReply): void {
    if (c.settled) return;
    c.settled = true;
    this.exchanges.observe(c.arrived, undefined);
    c.resolve(reply);
  }

  #fail(c: Gathered, err: NodeError): void {
    if (c.settled) return;
    c.settled = true;
    this.exchanges.observe(c.arrived, err.kind);
    c.reject(err);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  /** Sends the calls gathered so far, per path, as many batches as {@link #mayGo} lets out; the rest are held. */
  #flush(): void {
    this.#flushScheduled = false;
    for (const [path, calls] of this.#gathered) {
      let sent = 0;
      while (sent < calls.length) {
        const size = Math.min(MAX_BATCH_CALLS, calls.length - sent);
        if (!this.#mayGo(path, size)) break;
        const batch = calls.slice(sent, sent + size);
        sent += size;
        for (const c of batch) if (c.held) this.exchanges.stats.held--;
        this.#send(path, batch);
      }
      if (sent === calls.length) {
        this.#gathered.delete(path);
        continue;
      }
      const rest = sent === 0 ? calls : calls.slice(sent);
      for (const c of rest) {
        if (c.held) continue;
        c.held = true;
        this.exchanges.stats.held++;
      }
      this.#gathered.set(path, rest);
    }
  }

  /** One exchange of gathered calls on `path`, counted in flight until it ends; held calls of the path go next. */
  #exchange(path: string, body: Buffer, deadline: number, done: ExchangeDone): void {
    this.#inFlight.set(path, (this.#inFlight.get(path) ?? 0) + 1);
    this.exchanges.exchange(path, body, deadline, (err, reply) => {
      const left = (this.#inFlight.get(path) ?? 1) - 1;
      if (left === 0) this.#inFlight.delete(path);
      else this.#inFlight.set(path, left);
      if (this.#gathered.has(path)) this.#scheduleFlush();
      done(err, reply);
    });
  }

  /** Sends `calls` of `path`: one alone as it is, several as one batch whose reply is cut into theirs. */
  #send(path: string, calls: Gathered[]): void {
    if (calls.length === 1) {
      const only = calls[0] as Gathered;
      this.#exchange(path, only.body, this.#deadlineOf(only), (err, reply) =>
        err ? this.#fail(only, err) : this.#answer(only, reply as NodeReply),
      );
      return;
    }
    const parts: Buffer[] = [];
    for (const c of calls) parts.push(parts.length === 0 ? OPEN : COMMA, c.body);
    parts.push(CLOSE);
    // Calls arrive in order, so the last one's deadline is the latest.
    const last = this.#deadlineOf(calls[calls.length - 1] as Gathered);
    const expiry = this.#expireEarlier(calls, last);
    this.#exchange(path, Buffer.concat(parts), last, (err, reply) => {
      expiry.stop();
      if (err) {
        for (const c of calls) this.#fail(c, err);
        return;
      }
      const replies = splitBatchReply(reply as NodeReply, calls);
      if (replies === undefined) {
        // Not the batch reply Core gives. Never sent again: a write may have run.
        const message = `node answered garbage (HTTP ${(reply as NodeReply).status}, batch reply does not match the request)`;
        for (const c of calls) this.#fail(c, new NodeError('garbage', message));
        return;
      }
      this.batches.requests++;
      this.batches.calls += calls.length;
      calls.forEach((c, i) => this.#answer(c, replies[i] as NodeReply));
    });
  }

  /** One timer a batch that fails its calls due before `last` at their own deadlines (their elements of the answer are then dropped). */
  #expireEarlier(calls: Gathered[], last: number): { stop(): void } {
    let timer: NodeJS.Timeout | undefined;
    const expireDue = () => {
      const now = performance.now();
      let next = Number.POSITIVE_INFINITY;
      for (const c of calls) {
        if (c.settled) continue;
        const deadline = this.#deadlineOf(c);
        if (deadline <= now) this.#fail(c, this.exchanges.timedOut());
        else if (deadline < next) next = deadline;
      }
      timer = next < last ? setTimeout(expireDue, next - now) : undefined;
    };
    const first = this.#deadlineOf(calls[0] as Gathered);
    if (first < last) timer = setTimeout(expireDue, first - performance.now());
    return { stop: () => clearTimeout(timer) };
  }
}
