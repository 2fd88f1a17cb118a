import type { Logger } from '@repo/service';
import { CallBatcher } from './node-batcher';
import { NodeExchanges } from './node-exchanges';
import type { NodeFailure, NodeReply } from './node-reply';

export { looksLikeJson, NodeError, parseReply, type NodeFailure, type NodeReply } from './node-reply';

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
   * next, so a busy node gets fewer, larger batches. The proxy's: {@link CALL_BATCHING}.
   */
  batchesInFlight: number;
  /**
   * Once this many calls of a path are held behind its batches in flight, they go as one batch
   * more (at most `overlapBatches` beyond `batchesInFlight`), so that the node runs them while the
   * proxy answers the batch before (0: never).
   */
  overlapCalls: number;
  /** Batches a path may have in flight beyond `batchesInFlight`, each of `overlapCalls` held calls or more. */
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

/**
 * How the proxy's calls are gathered toward the node (docs/rpc-proxy.md, "Batching toward the
 * node"): one batch of a path out at a time, and up to three more, each once four calls wait
 * behind it (no more than Core's 16 RPC threads could run; a bound, not a setting).
 */
export const CALL_BATCHING = { batchesInFlight: 1, overlapCalls: 4, overlapBatches: 3 } as const;
/** Bodies larger than this go alone (a batch is built by concatenation). */
const MAX_BATCHED_BODY = 16 * 1024;

/**
 * Creates the node client (docs/rpc-proxy.md, "Node failures" and "Batching toward the node"):
 * exchanges over an undici Pool, at most `maxConcurrency` at once, the others in a FIFO queue
 * bounded by `queueLimit` (src/node-exchanges.ts); single calls of one turn gathered into
 * batches (src/node-batcher.ts). Each call has `timeoutMs` in all, from its arrival: the time
 * it waits for a connection or behind its path's batch counts, and a call whose time runs out
 * while it waits fails without being sent.
 */
export function createNodeClient(options: NodeClientOptions): NodeClient {
  const exchanges = new NodeExchanges(options);
  const batcher = new CallBatcher(exchanges);
  return {
    call(path, body) {
      const arrived = performance.now();
      return new Promise<NodeReply>((resolve, reject) =>
        exchanges.exchange(path, body, arrived + options.timeoutMs, (err, reply) => {
          exchanges.observe(arrived, err?.kind);
          if (err) reject(err);
          else resolve(reply as NodeReply);
        }),
      );
    },
    callBatched(path, body, legacy) {
      if (body.length > MAX_BATCHED_BODY) return this.call(path, body);
      return batcher.call(path, body, legacy);
    },
    batches: batcher.batches,
    stats: exchanges.stats,
    cookieError: () => exchanges.credentials.cookieError(),
    close: () => exchanges.close(),
  };
}
