import { RpcError } from '@repo/errors';
import { backoff } from '@repo/service';
import { ChainRpcError, rpcFailure } from '../chain-rpc';
import { sleep, type ScanContext } from './context';
import { poll } from './follow';
import { pollMempool } from './mempool';

/**
 * One turn of the main loop: the chain when a block was announced (or woken), at the poll
 * interval, or until synced; the mempool in between. A block the long poll missed (a call lost in
 * a node restart) is caught by the mempool turn's tip check at the latest.
 */
async function turn(ctx: ScanContext): Promise<void> {
  if (ctx.blockSignal || ctx.state !== 'synced' || Date.now() - ctx.lastFullPoll >= ctx.settings.pollIntervalMs) {
    ctx.blockSignal = false;
    ctx.lastFullPoll = Date.now();
    await poll(ctx);
    return;
  }
  if (!ctx.settings.mempool) return;
  // Both in one request: the rpc-proxy counts requests against its rate limit (README, "Load on the node").
  const [count, txids] = await ctx.rpc.batch([
    { method: 'getblockcount', params: [] },
    { method: 'getrawmempool', params: [] },
  ]);
  for (const answer of [count, txids]) if (answer instanceof RpcError) throw rpcFailure(answer);
  if (count !== ctx.tip) {
    ctx.blockSignal = true;
    return;
  }
  await pollMempool(ctx, txids as string[]);
}

/** Records a failed turn and logs it; returns how long to wait before the next one (ms). */
function failed(ctx: ScanContext, err: unknown, appliedBefore: number): number {
  // A catch-up that stored blocks before this failure starts the count again: a node that
  // fails now and then during a long catch-up is retried at the shortest wait, not one that
  // doubles with every failure since the start.
  if (ctx.blocksApplied !== appliedBefore) ctx.failures = 0;
  ctx.failures++;
  ctx.lastError = err instanceof Error ? err.message : String(err);
  ctx.failure =
    err instanceof ChainRpcError
      ? { kind: err.kind, status: err.status, rpcCode: err.rpcCode }
      : { kind: 'internal', status: undefined, rpcCode: undefined };
  ctx.state = 'retrying';
  const delay = backoff(ctx.failures - 1, { minMs: ctx.settings.minBackoffMs, maxMs: ctx.settings.maxBackoffMs });
  const fields = { failures: ctx.failures, retry_in_ms: delay, err: ctx.lastError };
  if (err instanceof ChainRpcError) {
    if (ctx.failures === 1 || ctx.failures % 10 === 0) ctx.logger.warn(fields, 'chain node failed: retrying');
  } else {
    ctx.logger.error({ ...fields, err }, 'scanner error: retrying');
  }
  return delay;
}

/**
 * The wait after a turn that succeeded (ms). Caught up: the mempool (and the tip's height) at its
 * interval. Waiting for the node's initial block download or for SP_START_HEIGHT: the chain at the
 * poll interval.
 */
function nextTurnIn(ctx: ScanContext): number {
  return ctx.settings.mempool && ctx.state === 'synced' ? ctx.settings.mempoolIntervalMs : ctx.settings.pollIntervalMs;
}

/** The scanner's main loop, until `ctx.stopped`: turns, retried with exponential backoff when the node fails. */
export async function mainLoop(ctx: ScanContext): Promise<void> {
  ctx.state = 'starting';
  while (!ctx.stopped) {
    const appliedBefore = ctx.blocksApplied;
    try {
      await turn(ctx);
      if (ctx.failures > 0) ctx.logger.info({ after_failures: ctx.failures }, 'chain node reachable again');
      ctx.failures = 0;
      ctx.lastError = null;
      ctx.failure = undefined;
      if (!ctx.stopped && !ctx.blockSignal) await sleep(ctx, nextTurnIn(ctx));
    } catch (err) {
      if (ctx.stopped) break;
      await sleep(ctx, failed(ctx, err, appliedBefore));
    }
  }
  ctx.state = 'stopped';
}
