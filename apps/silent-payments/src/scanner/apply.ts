import type { BlockTransaction } from '../store';
import type { ScanContext } from './context';
import type { ScannedBlock } from './scan-block';

/** What a consumer does once the block's transaction has committed (publish its events); nothing when it has nothing to say. */
export type AfterCommit = (() => void) | void;

/**
 * A consumer of the scanner's block pass (docs/silent-payments.md, "Block consumers"): the
 * service's own payments are the first; a light-wallet index can be attached beside them
 * (`ScannerOptions.consumers`). Each block is applied, and each reorg rolled back, in ONE store
 * transaction shared by every consumer and the scan progress: a restart or a failure finds all
 * of them at the same block. Both calls run synchronously inside the transaction (throwing rolls
 * back the block for every consumer, and the scanner retries it); what must wait for the commit
 * (events, logs) goes in the function they return.
 */
export interface BlockConsumer {
  /** A name for logs. */
  readonly name: string;
  /** Stores what it keeps of `block` (the block at `height`, already scanned for the service's keys). */
  apply(block: ScannedBlock, height: number, tx: BlockTransaction): AfterCommit;
  /** Forgets everything it stored above `height` (those blocks left the best chain). */
  rollback(height: number, tx: BlockTransaction): AfterCommit;
}

/** Runs each consumer's part inside one store transaction, then what they return once it committed. */
function inOneTransaction(ctx: ScanContext, part: (consumer: BlockConsumer, tx: BlockTransaction) => AfterCommit): void {
  const after = ctx.store.transaction((tx) => ctx.consumers.map((consumer) => part(consumer, tx)));
  for (const then of after) then?.();
}

/** Applies a scanned block for every consumer atomically, then records it in the scanner's status. */
export function applyBlock(ctx: ScanContext, block: ScannedBlock): void {
  for (const s of block.skipped) {
    // A transaction the library cannot parse cannot pay us by BIP-352 rules; never stall on it.
    ctx.logger.error({ txid: s.txid, err: s.error }, 'transaction skipped: cannot be scanned');
  }
  inOneTransaction(ctx, (consumer, tx) => consumer.apply(block, block.height, tx));
  ctx.blocksApplied++;
  const now = Date.now();
  ctx.recent.push(now);
  if (ctx.recent.length > 1_000) ctx.recent.shift();
  ctx.lastBlockAt = new Date(now).toISOString();
  ctx.logger.debug({ height: block.height, hash: block.hash, txs: block.nTx, hits: block.hits.length }, 'block scanned');
}

/** Rolls every consumer back to `height` atomically (the blocks above it left the best chain). */
export function rollbackTo(ctx: ScanContext, height: number): void {
  inOneTransaction(ctx, (consumer, tx) => consumer.rollback(height, tx));
}
