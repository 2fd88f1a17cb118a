import type { BlockTransaction } from '../store';
import type { ScanContext } from './context';
import type { ScannedBlock } from './scan-block';
import type { RpcTransaction } from './types';

/** What a consumer does once the block's transaction has committed (publish its events); nothing when it has nothing to say. */
export type AfterCommit = (() => void) | void;

/**
 * A consumer of the scanner's block pass (docs/silent-payments.md, "Block consumers"): the
 * service's own payments are the first; a light-wallet index can be attached beside them
 * (`ScannerOptions.consumers`). Each block is applied, and each reorg rolled back, in ONE store
 * transaction shared by every consumer and the scan progress: a restart or a failure finds all
 * of them at the same block. The transaction is the store's, on either backend
 * (`Store.transaction`: SQLite's one connection, or one PostgreSQL client between BEGIN and
 * COMMIT): `apply` and `rollback` are called in turn inside it, each awaited, and write through
 * the store's operations on `tx` (never on the store itself, whose calls wait for the
 * transaction's end on SQLite and do not see it on PostgreSQL). Throwing (or rejecting) rolls
 * back the block for every consumer, and the scanner retries it; what must wait for the commit
 * (events, logs) goes in the function they return.
 *
 * A consumer whose data lives in a store of its own (PostgreSQL) cannot join that transaction: it
 * does its work in `prepare` and `unwind`, awaited before the transaction of the block or of the
 * rollback. The block's progress commits only after they succeed, so such a consumer is never
 * behind the payments; it may be ahead (a failure between the two), and the block then comes
 * again: `prepare` must take a block it already holds (the same height and hash) as done.
 */
export interface BlockConsumer {
  /** A name for logs. */
  readonly name: string;
  /** Stores what it keeps of `block` (the block at `height`, already scanned for the service's keys), through `tx`. */
  apply(block: ScannedBlock, height: number, tx: BlockTransaction): AfterCommit | Promise<AfterCommit>;
  /** Forgets everything it stored above `height` (those blocks left the best chain), through `tx`. */
  rollback(height: number, tx: BlockTransaction): AfterCommit | Promise<AfterCommit>;
  /** Work in a store of its own for `block`, before the block's transaction (idempotent). */
  prepare?(block: ScannedBlock, height: number): Promise<void>;
  /** Forgets, in a store of its own, everything above `height`, before the rollback's transaction. */
  unwind?(height: number): Promise<void>;
  /** New mempool transactions with a taproot output, each input's `prevout` known (the scanner's mempool pass). */
  mempool?(txs: readonly RpcTransaction[]): void;
  /** The node's mempool now (each pass, before its new transactions): what is not in it left. */
  mempoolNow?(txids: ReadonlySet<string>): void;
}

/** Tells each consumer of the mempool what `tell` says; a consumer's failure is logged, never the pass's. */
export function tellMempool(ctx: ScanContext, tell: (consumer: BlockConsumer) => void): void {
  for (const consumer of ctx.consumers) {
    try {
      tell(consumer);
    } catch (err) {
      ctx.logger.error({ consumer: consumer.name, err }, 'mempool consumer failed');
    }
  }
}

/** Runs each consumer's part in turn inside one store transaction, then what they return once it committed. */
async function inOneTransaction(
  ctx: ScanContext,
  part: (consumer: BlockConsumer, tx: BlockTransaction) => AfterCommit | Promise<AfterCommit>,
): Promise<void> {
  const after = await ctx.store.transaction(async (tx) => {
    const then: AfterCommit[] = [];
    for (const consumer of ctx.consumers) then.push(await part(consumer, tx));
    return then;
  });
  for (const then of after) then?.();
}

/** Applies a scanned block for every consumer (their `prepare` first, then one transaction), then records it in the scanner's status. */
export async function applyBlock(ctx: ScanContext, block: ScannedBlock): Promise<void> {
  for (const consumer of ctx.consumers) await consumer.prepare?.(block, block.packed.height);
  for (const s of block.skipped) {
    // A transaction the library cannot parse cannot pay us by BIP-352 rules; never stall on it.
    ctx.logger.error({ txid: s.txid, err: s.error }, 'transaction skipped: cannot be scanned');
  }
  await inOneTransaction(ctx, (consumer, tx) => consumer.apply(block, block.packed.height, tx));
  ctx.blocksApplied++;
  const now = Date.now();
  ctx.recent.push(now);
  if (ctx.recent.length > 1_000) ctx.recent.shift();
  ctx.lastBlockAt = new Date(now).toISOString();
  ctx.logger.debug(
    { height: block.packed.height, hash: block.packed.hash, txs: block.packed.nTx, hits: block.hits.length },
    'block scanned',
  );
}

/** Rolls every consumer back to `height` (their `unwind` first, then one transaction): the blocks above it left the best chain. */
export async function rollbackTo(ctx: ScanContext, height: number): Promise<void> {
  for (const consumer of ctx.consumers) await consumer.unwind?.(height);
  await inOneTransaction(ctx, (consumer, tx) => consumer.rollback(height, tx));
}
