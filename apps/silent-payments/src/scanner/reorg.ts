import { ChainRpcError } from '../chain-rpc';
import { rollbackTo } from './apply';
import type { ScanContext } from './context';

/** The node's block hash at `height`; undefined when its chain is shorter. */
async function nodeHashAt(ctx: ScanContext, height: number): Promise<string | undefined> {
  try {
    return await ctx.rpc.call<string>('getblockhash', [height]);
  } catch (err) {
    // -8: height out of range (the node's chain is shorter than ours).
    if (err instanceof ChainRpcError && err.kind === 'rpc' && err.rpcCode === -8) return undefined;
    throw err;
  }
}

/**
 * Finds the highest stored block still on the node's chain and rolls every block consumer back
 * above it (one store transaction); returns that height (`scanned` when nothing left the chain).
 */
export async function followReorg(ctx: ScanContext, scanned: number): Promise<number> {
  let height = scanned;
  for (;;) {
    const stored = await ctx.store.blockHash(height);
    if (stored === undefined) break; // below the first block kept: nothing older to compare
    const current = await nodeHashAt(ctx, height);
    if (current === stored) break;
    height--;
  }
  if (height < scanned) {
    await rollbackTo(ctx, height);
    ctx.mempoolSeen.clear();
  }
  return height;
}
