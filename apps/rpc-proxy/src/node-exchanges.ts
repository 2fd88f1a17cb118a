import { createNodeCredentials, type NodeCredentials } from '@repo/node-auth';
import type { NodeClientOptions } from './node-client';
import { looksLikeJson, NodeError, type NodeFailure, type NodeReply } from './node-reply';
import { createNodeConnections, type NodeConnections } from './node-connections';

const COOKIE_RECHECK_MS = 1_000;
/** The failure of a call with no room left to wait (NODE_QUEUE_LIMIT). */
export const QUEUE_FULL = 'proxy queue full: too many requests waiting for the node';
/** The headers of every call to the node (its Authorization added when there is one). */
const JSON_REQUEST_HEADERS: readonly string[] = ['Content-Type', 'application/json'];

/** How one exchange ends: an error, or the node's reply. */
export type ExchangeDone = (err: NodeError | undefined, reply?: NodeReply) => void;

/** Whether an exchange was already sent again after a reset connection or a refreshed cookie. */
interface Retried {
  reset: boolean;
  auth: boolean;
}

/**
 * HTTP exchanges with the node, at most `maxConcurrency` at once: the others wait in a FIFO queue
 * here, never at the connections (bitcoind answers 503 past its -rpcworkqueue, so the proxy
 * queues instead of overrunning it); past `queueLimit` waiting (with the calls its batcher holds,
 * `held`), an exchange fails at once with kind `queue`. Each exchange fails with `timeout` at its
 * deadline, its wait for a slot included; one the node closed before answering on a kept-alive
 * connection is sent again once, and once more after the node refused a cookie that changed.
 */
export class NodeExchanges {
  readonly stats = { active: 0, queued: 0, held: 0, maxActive: 0 };
  readonly credentials: NodeCredentials;
  readonly #connections: NodeConnections;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly options: NodeClientOptions) {
    // Our own timer bounds the whole call; bitcoind closes idle connections after 30 s.
    this.#connections = createNodeConnections({ url: options.url, connections: options.maxConcurrency, keepAliveMs: 20_000 });
    this.credentials = createNodeCredentials({
      user: options.user,
      password: options.password,
      cookieFile: options.cookieFile,
      cookieSetting: 'BITCOIND_COOKIE_FILE',
      who: 'proxy',
      logger: options.logger,
      recheckMs: COOKIE_RECHECK_MS,
    });
  }

  /** Room for one more call to wait, queued for a connection or held behind its path's batches. */
  roomToWait(): boolean {
    return this.stats.queued + this.stats.held < this.options.queueLimit;
  }

  timedOut(): NodeError {
    return new NodeError('timeout', `node timed out after ${this.options.timeoutMs} ms`);
  }

  /** Tells the observer (the metrics) of a call that ended, `arrived` (performance.now()) ago. */
  observe(arrived: number, failure: NodeFailure | undefined): void {
    this.options.observe?.((performance.now() - arrived) / 1000, failure);
  }

  /** One HTTP exchange in a slot (waiting for one when all are busy), failed with `timeout` at `deadline` (performance.now()). */
  exchange(path: string, body: string | Buffer, deadline: number, done: ExchangeDone): void {
    const start = () =>
      this.#send(path, body, deadline, { reset: false, auth: false }, (err, reply) => {
        this.#release();
        done(err, reply);
      });
    if (this.stats.active < this.options.maxConcurrency) {
      this.stats.active++;
      if (this.stats.active > this.stats.maxActive) this.stats.maxActive = this.stats.active;
      start();
    } else if (this.roomToWait()) {
      this.stats.queued++;
      this.#waiting.push(start);
    } else done(new NodeError('queue', QUEUE_FULL));
  }

  close(): void {
    this.#connections.close();
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) {
      this.stats.queued--;
      next();
    } else this.stats.active--;
  }

  /** The node's answer as a reply or a failure: refusals, a busy node, garbage. */
  #outcome(status: number, buf: Buffer): NodeError | NodeReply {
    if (status === 401 || status === 403) {
      const refusal = this.credentials.refusal(status);
      return new NodeError(refusal.kind, refusal.message);
    }
    if (status === 503) return new NodeError('busy', 'node busy: work queue depth exceeded (HTTP 503)');
    if (status === 204 && buf.length === 0) return { status, body: buf };
    if (!looksLikeJson(buf)) return new NodeError('garbage', `node answered garbage (HTTP ${status}, not JSON)`);
    return { status, body: buf };
  }

  /** One HTTP exchange, failed with `timeout` at `deadline`; `done` is called exactly once. */
  #send(path: string, body: string | Buffer, deadline: number, retried: Retried, done: ExchangeDone): void {
    const auth = this.credentials.authorization();
    const headers = auth === undefined ? JSON_REQUEST_HEADERS : [...JSON_REQUEST_HEADERS, 'Authorization', auth];
    // Out of time before it could go (it waited for a slot, or is a retry): fails unsent.
    const left = deadline - performance.now();
    if (left <= 0) return done(this.timedOut());
    let finished = false;
    let timedOut = false;
    const finish = (err: NodeError | undefined, reply?: NodeReply) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done(err, reply);
    };
    const again = (which: Partial<Retried>) => {
      finished = true;
      clearTimeout(timer);
      this.#send(path, body, deadline, { ...retried, ...which }, done);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      abort();
      finish(this.timedOut());
    }, left);
    const abort = this.#connections.request(path, headers, body, {
      onComplete: (status, buf) => {
        const refused = status === 401 || status === 403;
        if (refused && !retried.auth && this.credentials.refreshAfterRefusal()) return again({ auth: true });
        const outcome = this.#outcome(status, buf);
        if (outcome instanceof NodeError) finish(outcome);
        else finish(undefined, outcome);
      },
      onError: (code, answering, unsent) => {
        if (finished) return;
        if (timedOut) return finish(this.timedOut());
        if (answering) return finish(new NodeError('unreachable', 'node unreachable (connection closed mid-answer)'));
        // A kept-alive connection the node closed while idle: the request never reached it, send again once.
        if (unsent && !retried.reset) return again({ reset: true });
        finish(new NodeError('unreachable', `node unreachable (${code})`));
      },
    });
  }
}
