import type { ScanProgress } from '../store';
import type { ScanContext } from './context';

/** Logs a wait at warn level: at its start, then every progress interval while it lasts. */
function warnWait(ctx: ScanContext, state: 'initial_block_download' | 'waiting', fields: Record<string, unknown>, message: string): void {
  const now = Date.now();
  if (ctx.state !== state || now - ctx.lastWaitLog >= ctx.settings.progressEveryMs) {
    ctx.lastWaitLog = now;
    ctx.logger.warn(fields, message);
  }
  ctx.state = state;
}

/**
 * The scan's progress, taking the start height on the first start (docs/silent-payments.md,
 * "Start height"); undefined while it must wait, saying at warn level what for and what ends the
 * wait. Without SP_START_HEIGHT the start is the node's tip, but not while the node says it is
 * in its initial block download: a half-synced node's tip is no start height. With
 * SP_START_HEIGHT the node's word is not needed: its blocks complete (`blocks == headers`) are
 * enough, since Core stays "in initial block download" while its tip is older than
 * `-maxtipage` (a node stopped for a day, until a new block arrives).
 */
export async function takeStartHeight(ctx: ScanContext): Promise<ScanProgress | undefined> {
  const progress = ctx.store.progress();
  const node = ctx.node!;
  const configured = ctx.settings.startHeight;
  if (progress.startHeight !== undefined) {
    if (configured !== undefined && configured !== progress.startHeight && ctx.state === 'starting') {
      ctx.logger.warn(
        { configured, stored: progress.startHeight },
        'SP_START_HEIGHT differs from the stored start: resuming where the scan stopped',
      );
    }
    return progress;
  }
  const blocksComplete = node.blocks >= node.headers;
  if (node.initialblockdownload && (configured === undefined || !blocksComplete)) {
    const { blocks, headers, verificationprogress } = node;
    warnWait(
      ctx,
      'initial_block_download',
      {
        blocks,
        headers,
        verificationprogress,
        start_height: configured ?? 'the tip once synced',
        ends_when:
          configured === undefined
            ? 'the node reports initialblockdownload false (a block newer than its -maxtipage), or SP_START_HEIGHT is set and its blocks reach its headers'
            : "the node's blocks reach its headers",
      },
      configured === undefined
        ? "waiting for the node's initial block download to finish before taking its tip as the start height"
        : "waiting for the node's initial block download: its blocks have not reached its headers",
    );
    return undefined;
  }
  const tip = ctx.tip!;
  const start = configured ?? tip;
  if (start > tip + 1) {
    warnWait(
      ctx,
      'waiting',
      { start_height: start, tip, ends_when: `the node's tip reaches ${start - 1}` },
      'waiting for the chain to reach SP_START_HEIGHT',
    );
    return undefined;
  }
  const anchor = start > 0 ? await ctx.rpc.call<string>('getblockhash', [start - 1]) : undefined;
  await ctx.store.initProgress(start, anchor);
  ctx.logger.info({ start_height: start, tip }, 'scanner initialised');
  return ctx.store.progress();
}
