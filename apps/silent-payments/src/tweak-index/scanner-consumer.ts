import { ChainRpcError, type ChainRpcClient } from '../chain-rpc';
import type { BlockConsumer } from '../scanner';
import { fetchBlock } from '../scanner/scan-block';
import type { TweakIndexer } from './indexer';

/** What {@link tweakIndexConsumer} needs: the indexer, the node (for blocks the index lacks), where the index starts. */
export interface TweakIndexConsumerOptions {
  indexer: TweakIndexer;
  rpc: Pick<ChainRpcClient, 'call'>;
  /** SP_INDEX_START_HEIGHT, else the scanner's start height (known once the scanner has taken it). */
  startHeight: () => number;
}

/**
 * The tweak index as a consumer of the scanner's block pass (docs/silent-payments.md, "Block
 * consumers"). Its store is its own (a file of its own, or PostgreSQL), so it works in `prepare`
 * and `unwind`, before the block's transaction. Before a block it brings the index to the block's
 * parent: blocks it lacks (the index turned on after the scanner had passed them, or a stop between
 * the two writes) are fetched from the node, and blocks it holds that left the best chain while it
 * was not told (a reorg during a stop) are rolled back first.
 */
export function tweakIndexConsumer(options: TweakIndexConsumerOptions): BlockConsumer {
  const { indexer } = options;
  return {
    name: 'tweak-index',
    apply: () => undefined,
    rollback: () => undefined,
    async prepare(block, height) {
      if (height < options.startHeight()) return;
      await catchUp(options, height - 1, block.packed.previousblockhash);
      await indexer.applyBlock(block.packed, height);
    },
    mempool: (txs) => indexer.addMempool(txs),
    mempoolNow: (txids) => indexer.keepMempool(txids),
    async unwind(height) {
      // The scanner keeps `height` and drops what is above it; the indexer's rollback drops its argument too.
      const tip = await indexer.store.tip();
      if (tip !== undefined && tip.height > height) await indexer.rollback(Math.max(height + 1, options.startHeight()));
    },
  };
}

/** Brings the index to `parentHeight`, whose hash the node gives as `parentHash`. */
async function catchUp(options: TweakIndexConsumerOptions, parentHeight: number, parentHash: string | undefined) {
  const { indexer, rpc } = options;
  const startHeight = options.startHeight();
  let tip = await indexer.store.tip();
  // Off the best chain, or ahead of the scanner: back to the first block both agree on.
  while (tip !== undefined && tip.height >= startHeight) {
    const nodeHash = tip.height === parentHeight && parentHash !== undefined ? parentHash : await hashAt(rpc, tip.height);
    if (tip.height <= parentHeight && nodeHash?.toLowerCase() === tip.hash) break;
    await indexer.rollback(tip.height);
    tip = await indexer.store.tip();
  }
  const from = Math.max(startHeight, tip === undefined ? startHeight : tip.height + 1);
  for (let height = from; height <= parentHeight; height++) {
    const hash = await rpc.call<string>('getblockhash', [height]);
    await indexer.applyBlock(await fetchBlock(rpc, hash), height);
  }
}

/** Core's code for a height past its tip (`getblockhash`). */
const RPC_INVALID_PARAMETER = -8;

/** The best chain's block hash at `height`, or undefined when the node has no block there; any other failure is thrown (the scanner retries). */
async function hashAt(rpc: Pick<ChainRpcClient, 'call'>, height: number): Promise<string | undefined> {
  try {
    return await rpc.call<string>('getblockhash', [height]);
  } catch (err) {
    if (err instanceof ChainRpcError && err.rpcCode === RPC_INVALID_PARAMETER) return undefined;
    throw err;
  }
}
