import type { ScanContext } from './context';
import type { ScannerStatus } from './types';

/** Blocks stored per second over the last 30 s. */
export function blocksPerSecond(ctx: ScanContext): number {
  const { recent } = ctx;
  const now = Date.now();
  while (recent.length > 0 && now - recent[0]! > 30_000) recent.shift();
  if (recent.length < 2) return 0;
  const span = (now - recent[0]!) / 1000;
  return span <= 0 ? 0 : Math.round(((recent.length - 1) / span) * 100) / 100;
}

/** The scanner's status (`/health`, `/ready`, the metrics). */
export function scannerStatus(ctx: ScanContext): ScannerStatus {
  const progress = ctx.store.progress();
  return {
    state: ctx.state,
    start_height: progress.startHeight ?? null,
    scanned_height: progress.scannedHeight ?? null,
    tip_height: ctx.tip ?? null,
    blocks_per_second: blocksPerSecond(ctx),
    failures: ctx.failures,
    last_error: ctx.lastError,
    last_block_at: ctx.lastBlockAt,
    node: ctx.node,
    long_poll: ctx.longPollState,
  };
}
