import { EventEmitter } from 'node:events';
import { loadSecp256k1Backend, type AnySecp256k1Backend, type BackendName, type PackedBlockAnswer } from '@repo/bip352';
import { readBlock, type RpcBlockTx } from './block-record';
import { createMempoolIndex, type MempoolIndex } from './mempool';
import type { TweakIndexStore } from './store';

/** Options of {@link createTweakIndexer}. */
export interface TweakIndexerOptions {
  /** Blocks below it are ignored (SP_INDEX_START_HEIGHT); default 0. */
  startHeight?: number;
  /** The secp256k1 backend of the tweaks; default `@repo/bip352`'s (native). */
  backend?: BackendName;
}

/**
 * What {@link TweakIndexer.events} emits: `block` (height, hash) after a block is stored,
 * `rollback` (height) after one is removed, `mempool` (txids) after mempool transactions are
 * indexed, `mempool-gone` (txids) after indexed ones left the node's mempool unmined (replaced,
 * evicted, or mined in a block not indexed yet).
 */
export interface TweakIndexerEvents {
  block: [height: number, hash: string];
  rollback: [height: number];
  mempool: [txids: string[]];
  'mempool-gone': [txids: string[]];
}

/** Builds the index block by block (the scanner's block pass calls it; docs/silent-payments.md, "The tweak index (light wallets)"). */
export interface TweakIndexer {
  readonly store: TweakIndexStore;
  readonly events: EventEmitter<TweakIndexerEvents>;
  /** The mempool's eligible transactions, in memory. */
  readonly mempool: MempoolIndex;
  /** Indexes transactions seen in the mempool (with their inputs' prevouts) and emits `mempool` with those added. */
  addMempool(txs: readonly RpcBlockTx[]): void;
  /** Keeps only the mempool transactions still in the node's mempool (`current`) and emits `mempool-gone` with the others. */
  keepMempool(current: ReadonlySet<string>): void;
  /**
   * Indexes one block at `height`, atomically: `getblock <hash> 3` as the scanner reads it
   * (`@repo/bip352`'s packBlockAnswer; scanner/scan-block.ts, fetchBlock). A block below the
   * start height is ignored; a block at the height already indexed with the same hash is a no-op.
   * @throws {Error} when the block does not extend the indexed tip (roll back first), or lacks what the index keeps.
   */
  applyBlock(block: PackedBlockAnswer, height: number): Promise<void>;
  /** Removes the block at `height` and everything above it, atomically (a reorg). */
  rollback(height: number): Promise<void>;
  /** Waits for the write in progress, if any (the store is the caller's). */
  close(): Promise<void>;
}

/** Creates the indexer writing to `store` (opened by the caller). */
export function createTweakIndexer(store: TweakIndexStore, options: TweakIndexerOptions = {}): TweakIndexer {
  const startHeight = options.startHeight ?? 0;
  const events = new EventEmitter<TweakIndexerEvents>();
  events.setMaxListeners(0); // each Electrum connection listens: no cap to warn at
  let backend: AnySecp256k1Backend | undefined;
  const tweakBackend = (): AnySecp256k1Backend => (backend ??= loadSecp256k1Backend(options.backend));
  const mempool = createMempoolIndex(tweakBackend);
  // One write at a time, in call order: a rollback never interleaves with a block.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  const apply = async (block: PackedBlockAnswer, height: number): Promise<void> => {
    if (height < startHeight) return;
    if (block?.height !== height) throw new Error(`block ${String(block?.hash)} is at height ${String(block?.height)}, not ${height}`);
    const tip = await store.tip();
    if (tip !== undefined) {
      const [existing] = height <= tip.height ? await store.blocks(height, height) : [];
      if (existing?.hash === block.hash.toLowerCase()) return;
      if (height !== tip.height + 1 || block.previousblockhash?.toLowerCase() !== tip.hash) {
        throw new Error(`block ${block.hash} at ${height} does not extend the indexed tip ${tip.hash} at ${tip.height}`);
      }
    }
    const record = await readBlock(block, tweakBackend());
    await store.applyBlock(record);
    // a mempool transaction the index holds is eligible: mined, it is among the block's indexed ones
    mempool.mined(record.txs.map((tx) => tx.txid));
    events.emit('block', height, block.hash.toLowerCase());
  };

  return {
    store,
    events,
    mempool,
    addMempool(txs) {
      const added = mempool.add(txs);
      if (added.length > 0) events.emit('mempool', added);
    },
    keepMempool(current) {
      const gone = mempool.keep(current);
      if (gone.length > 0) events.emit('mempool-gone', gone);
    },
    applyBlock: (block, height) => serial(() => apply(block, height)),
    rollback: (height) =>
      serial(async () => {
        await store.rollback(height);
        events.emit('rollback', height);
      }),
    close: () => queue.then(() => undefined),
  };
}
