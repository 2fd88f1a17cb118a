import type { Scanner, ScannerOptions } from './types';
import { createScanContext } from './context';
import { longPollLoop } from './long-poll';
import { mainLoop } from './loop';
import { paymentsConsumer } from './payments';
import { scannerStatus } from './status';

export type { BlockConsumer, AfterCommit } from './apply';
export type { ScannedBlock, Hit } from './scan-block';
export * from './types';

/**
 * Creates the scanner (docs/silent-payments.md, "Scanner"): follows the node's best chain with
 * `getblock <hash> 3` from the start height, applies each block for every consumer (the
 * service's payments first) with the block hash and the new height in one store transaction (so a
 * restart resumes exactly after the last block stored), detects reorgs by comparing stored hashes
 * with the node's and rolls the consumers back, records mempool payments as pending, and retries a
 * failing node with exponential backoff. Its state is one object (`./context`) that the modules
 * of this folder take as their first argument.
 */
export function createScanner(options: ScannerOptions): Scanner {
  const ctx = createScanContext(options);
  ctx.consumers.push(paymentsConsumer(ctx), ...(options.consumers ?? []));
  return {
    start() {
      if (ctx.running !== undefined) return;
      ctx.stopped = false;
      ctx.running = mainLoop(ctx);
      if (ctx.settings.longPoll !== undefined) ctx.longPolling = longPollLoop(ctx, ctx.settings.longPoll);
    },
    async stop() {
      ctx.stopped = true;
      ctx.wakeUp?.();
      ctx.longPollWake?.();
      // The caller closes the long poll's client, which ends a call in flight.
      await ctx.longPolling;
      ctx.longPolling = undefined;
      ctx.longPollState = 'off';
      await ctx.running;
      ctx.running = undefined;
      ctx.state = 'stopped';
    },
    wake() {
      ctx.blockSignal = true;
      ctx.wakeUp?.();
    },
    longPollState: () => ctx.longPollState,
    status: () => scannerStatus(ctx),
    lastFailure: () => ctx.failure,
    tipHeight: () => ctx.tip,
  };
}
