import { backoff } from '@repo/service';
import type { ChainRpcClient } from '../chain-rpc';
import { ChainRpcError } from '../chain-rpc';
import { wakeableDelay, type ScanContext } from './context';

/** A wait between two long polls; `ctx.longPollWake()` (stop()) ends it early. */
function pause(ctx: ScanContext, ms: number): Promise<void> {
  return wakeableDelay(ms, (wake) => {
    ctx.longPollWake = wake;
  });
}

/** Whether `err` is the node's JSON-RPC error `code`. */
const isRpcCode = (err: unknown, ...codes: number[]): boolean =>
  err instanceof ChainRpcError && err.kind === 'rpc' && err.rpcCode !== undefined && codes.includes(err.rpcCode);

/**
 * Waits for new blocks with `waitfornewblock <timeout> [current_tip]` (docs/silent-payments.md,
 * "Noticing blocks and transactions") and signals the main loop at once. `current_tip` (newer
 * Bitcoin Core) makes a block found between two calls return at once; Bitcoin Core 29 refuses it
 * (-1) and gets the call without (a block between two calls is then caught by the mempool
 * pass's tip check). A node or proxy that refuses the method (-32601) leaves the polling alone.
 */
export async function longPollLoop(ctx: ScanContext, lp: { rpc: ChainRpcClient; timeoutMs: number }): Promise<void> {
  let withTip = true;
  let lastHash: string | undefined;
  let failures = 0;
  while (!ctx.stopped) {
    ctx.longPollState = 'waiting';
    try {
      // The tip to compare with: a block found before the first call is then announced too.
      lastHash ??= await lp.rpc.call<string>('getbestblockhash', []);
      const params: unknown[] = withTip ? [lp.timeoutMs, lastHash] : [lp.timeoutMs];
      const answer = await lp.rpc.call<{ hash: string; height: number }>('waitfornewblock', params);
      failures = 0;
      if (answer.hash !== lastHash) {
        ctx.logger.debug({ height: answer.height, hash: answer.hash }, 'new block announced by waitfornewblock');
        ctx.blockSignal = true;
        if (ctx.state !== 'initial_block_download') ctx.wakeUp?.();
      }
      lastHash = answer.hash;
      // A node in its initial block download finds blocks many times a second: the main loop
      // checks it at the poll interval, and the long poll waits as long between its calls.
      if (ctx.state === 'initial_block_download') await pause(ctx, ctx.settings.pollIntervalMs);
    } catch (err) {
      if (ctx.stopped) break;
      if (isRpcCode(err, -32601)) {
        ctx.longPollState = 'unsupported';
        ctx.logger.warn(
          { poll_interval_ms: ctx.settings.pollIntervalMs },
          'waitfornewblock (or getbestblockhash) is not allowed by the node or proxy: new blocks are polled',
        );
        return;
      }
      if (withTip && isRpcCode(err, -1, -8)) {
        withTip = false; // a node before current_tip
        continue;
      }
      failures++;
      ctx.longPollState = 'retrying';
      if (failures === 1 || failures % 10 === 0) ctx.logger.debug({ failures, err: (err as Error).message }, 'long poll failed: retrying');
      await pause(ctx, backoff(failures - 1, { minMs: ctx.settings.minBackoffMs, maxMs: ctx.settings.maxBackoffMs }));
    }
  }
}
