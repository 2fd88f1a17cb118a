import type { ScanContext } from './context';
import { applyBlock } from './apply';
import { pollMempool } from './mempool';
import { followReorg } from './reorg';
import { fetchBlock, scanBlock, type ScannedBlock } from './scan-block';
import { takeStartHeight } from './start-height';
import { blocksPerSecond } from './status';

/** A block asked of the node ahead of the one being applied. */
interface Ahead {
  height: number;
  scanned: Promise<ScannedBlock>;
}

/**
 * The blocks fetched ahead during one catch-up: at most `prefetchBlocks` fetched and not yet
 * applied (the memory bound, docs/silent-payments.md, "Catching up"), `fetchConcurrency`
 * requests out at a time, in height order; each scanned as soon as it arrives, so the node's work
 * on the next blocks and the scan of this one overlap. Results are applied strictly in order.
 */
interface Prefetch {
  ahead: Ahead[];
  nextFetch: number;
  /** The fetches sent last (settled, never rejecting): a new one waits for the oldest when fetchConcurrency are out. */
  fetching: Promise<unknown>[];
  /** Bumped when the blocks ahead are given up (reorg, failure, stop): their queued requests are not sent. */
  epoch: number;
}

/** Sends the request for the block at `height` (after the oldest one out when `fetchConcurrency` are). */
function fetchAhead(ctx: ScanContext, prefetch: Prefetch, height: number): Ahead {
  const mine = prefetch.epoch;
  const turn = prefetch.fetching.length >= ctx.settings.fetchConcurrency ? prefetch.fetching.shift()! : Promise.resolve();
  const givenUp = () => ctx.stopped || mine !== prefetch.epoch;
  const fetched = turn.then(async () => {
    if (givenUp()) throw new Error('prefetch given up');
    const hash = await ctx.rpc.call<string>('getblockhash', [height]);
    if (givenUp()) throw new Error('prefetch given up');
    return fetchBlock(ctx.rpc, hash, () => parsedBlock(ctx, height));
  });
  // A failed fetch ends the catch-up at its block: the requests queued behind it are not sent (a
  // node failing every n-th request would otherwise fail every attempt at its first block).
  prefetch.fetching.push(
    fetched.catch(() => {
      if (mine === prefetch.epoch) prefetch.epoch++;
    }),
  );
  const scanned = fetched.then((block) => scanBlock(ctx, block));
  // a prefetch given up (reorg, stop, a failure before it) must not be an unhandled rejection
  scanned.catch(() => undefined);
  return { height, scanned };
}

/** Says once that a block answer was parsed because the native reader did not take it: the catch-up then costs several times the CPU. */
function parsedBlock(ctx: ScanContext, height: number): void {
  if (ctx.parsedBlockLogged) return;
  ctx.parsedBlockLogged = true;
  ctx.logger.warn(
    { height },
    "block answer read by JSON.parse: the native reader did not take the node's answer (a proxy that rewrites it, or no native addon); scanning goes on, slower",
  );
}

/** Gives up the blocks ahead (their queued requests are not sent). */
function giveUp(prefetch: Prefetch): void {
  prefetch.ahead.length = 0;
  prefetch.epoch++;
}

/** Stores the blocks from `scanned + 1` to the node's tip, following reorgs met on the way; returns the blocks stored. */
async function catchUp(ctx: ScanContext, from: number): Promise<number> {
  let scanned = from;
  let blocks = 0;
  const prefetch: Prefetch = { ahead: [], nextFetch: scanned + 1, fetching: [], epoch: 0 };
  try {
    while (scanned < ctx.tip! && !ctx.stopped) {
      for (; prefetch.ahead.length < ctx.settings.prefetchBlocks && prefetch.nextFetch <= ctx.tip!; prefetch.nextFetch++) {
        prefetch.ahead.push(fetchAhead(ctx, prefetch, prefetch.nextFetch));
      }
      const current = prefetch.ahead.shift()!;
      const block = await current.scanned;
      const below = await ctx.store.blockHash(scanned);
      if (below !== undefined && block.packed.previousblockhash !== below) {
        giveUp(prefetch);
        scanned = await followReorg(ctx, scanned);
        prefetch.nextFetch = scanned + 1;
        continue;
      }
      if (ctx.stopped) break;
      await applyBlock(ctx, block);
      scanned = current.height;
      blocks++;
      if (Date.now() - ctx.lastProgressLog >= ctx.settings.progressEveryMs) {
        ctx.lastProgressLog = Date.now();
        ctx.logger.info({ scanned_height: scanned, tip: ctx.tip, blocks_per_second: blocksPerSecond(ctx) }, 'scanning');
      }
      if (scanned === ctx.tip) ctx.tip = await ctx.rpc.call<number>('getblockcount', []);
    }
  } finally {
    giveUp(prefetch);
  }
  if (!ctx.stopped && (!ctx.everSynced || blocks > 1)) {
    // Once at start and after a catch-up; a single new block is only logged at debug level.
    ctx.logger.info({ scanned_height: scanned, tip: ctx.tip, blocks }, 'scanner caught up with the tip');
  }
  return blocks;
}

/** Reads the node's state (`getblockchaininfo`): its tip and whether it says it is in its initial block download. */
async function readNode(ctx: ScanContext): Promise<void> {
  const info = await ctx.rpc.call<{
    blocks: number;
    headers?: number;
    initialblockdownload?: boolean;
    verificationprogress?: number;
  }>('getblockchaininfo', []);
  ctx.tip = info.blocks;
  ctx.node = {
    blocks: info.blocks,
    headers: info.headers ?? info.blocks,
    verificationprogress: info.verificationprogress ?? 1,
    initialblockdownload: info.initialblockdownload === true,
  };
}

/** One full pass: the node's state, the start height, a catch-up with the tip (following reorgs), then the mempool. */
export async function poll(ctx: ScanContext): Promise<void> {
  await readNode(ctx);
  const progress = await takeStartHeight(ctx);
  if (progress === undefined) return;
  const scanned = await followReorg(ctx, progress.scannedHeight!);
  if (scanned < ctx.tip!) ctx.state = 'syncing';
  await catchUp(ctx, scanned);
  if (ctx.stopped) return;
  ctx.everSynced = true;
  if (ctx.settings.mempool) await pollMempool(ctx);
  ctx.state = 'synced';
}
