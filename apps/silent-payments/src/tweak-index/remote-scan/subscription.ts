import type { ElectrumContext } from '../electrum/protocol';
import type { RemoteMatch } from './scan-rows';
import type { WalletKeys } from './wallet-keys';

/** The notification's method (Frigate's README, "Electrum protocol"). */
export const SP_METHOD = 'blockchain.silentpayments.subscribe';
/** Heights read from the store at once. */
const PAGE_HEIGHTS = 20;
/**
 * Rows of one job of the scan pool: the unit the workers are shared by (another wallet's new
 * block waits for at most one job a worker, tens of milliseconds).
 */
const ROW_CHUNK = 512;
/** History entries in one notification at most (Frigate's suggested page). */
export const HISTORY_PAGE = 100;

/** One wallet subscribed on one connection; its keys live here and nowhere else. */
export interface Subscription {
  keys: WalletKeys;
  startHeight: number;
  /** The next height to scan. */
  next: number;
  /** Set by a reorg under a running page: the scan goes back to it. */
  rewindTo: number | undefined;
  /** Whether `progress` 1.0 was sent (the history scan is over). */
  live: boolean;
  running: boolean;
  again: boolean;
  cancelled: boolean;
  /** The transactions found so far that pay the wallet, by txid (the wallet methods serve their outputs); height 0: in the mempool. */
  found: Map<string, RemoteMatch>;
  /** The mempool transactions scanned already (each is scanned, and a match sent, once). */
  mempoolSeen: Set<string>;
  /** Called once when the history scan ends or is cancelled (frees the scan slot). */
  onHistoryDone: () => void;
}

/** What one page of rows found: its rows in jobs of the scan pool, all queued at once (the workers take them in turn with other wallets'). */
async function scanPage(sub: Subscription, ctx: ElectrumContext, from: number, to: number): Promise<RemoteMatch[]> {
  const txs = await ctx.feed.store.txs(from, to);
  if (sub.cancelled || ctx.closed) return [];
  const jobs: Array<Promise<RemoteMatch[]>> = [];
  for (let i = 0; i < txs.length; i += ROW_CHUNK)
    jobs.push(ctx.settings.scanPool.scan(sub, sub.keys, txs.slice(i, i + ROW_CHUNK), sub.live));
  return (await Promise.all(jobs)).flat();
}

function notification(sub: Subscription, progress: number, history: readonly RemoteMatch[]): unknown[] {
  return [
    {
      subscription: { address: sub.keys.address, start_height: sub.startHeight },
      progress,
      history: history.map((m) => ({ height: m.height, tx_hash: m.txid })),
    },
  ];
}

/**
 * The mempool transactions not scanned yet that pay the wallet (height 0), once the history is
 * complete; those found in a block meanwhile are not repeated.
 */
async function scanMempool(ctx: ElectrumContext, sub: Subscription): Promise<RemoteMatch[]> {
  const { mempool } = ctx.feed;
  if (mempool === undefined || !sub.live) return [];
  for (const txid of sub.mempoolSeen) if (!mempool.has(txid)) sub.mempoolSeen.delete(txid);
  const rows = mempool.rows().filter((row) => !sub.mempoolSeen.has(row.txid));
  for (const row of rows) sub.mempoolSeen.add(row.txid);
  const jobs: Array<Promise<RemoteMatch[]>> = [];
  for (let i = 0; i < rows.length; i += ROW_CHUNK) jobs.push(ctx.settings.scanPool.scan(sub, sub.keys, rows.slice(i, i + ROW_CHUNK), true));
  const found = (await Promise.all(jobs)).flat().filter((m) => !sub.found.has(m.txid));
  for (const m of found) sub.found.set(m.txid, m);
  return found;
}

/** Sends the mempool's new matches (height 0) in notifications of `progress` 1.0. */
async function notifyMempool(ctx: ElectrumContext, sub: Subscription): Promise<void> {
  const pending = await scanMempool(ctx, sub);
  if (pending.length === 0 || sub.cancelled || ctx.closed) return;
  await flushFull(ctx, sub, pending, 1);
  if (pending.length > 0) await ctx.notify(SP_METHOD, notification(sub, 1, pending));
}

/** Sends full pages of `history` (progress below 1.0 during the history scan), keeping the rest. */
async function flushFull(ctx: ElectrumContext, sub: Subscription, history: RemoteMatch[], progress: number): Promise<void> {
  while (history.length >= HISTORY_PAGE && !sub.cancelled) {
    await ctx.notify(SP_METHOD, notification(sub, sub.live ? 1 : Math.min(progress, 0.999), history.splice(0, HISTORY_PAGE)));
  }
}

/**
 * Scans the subscription's heights up to the indexed tip and notifies what pays the wallet: during
 * the history scan pages of at most 100 entries with `progress` < 1.0, then one notification with
 * `progress` 1.0 (even when empty); afterwards a `progress` 1.0 notification per block that pays it,
 * and for the mempool's transactions that pay it, each once (height 0), after the history.
 * A second call while running makes the running one go round again.
 */
export async function pumpSubscription(ctx: ElectrumContext, sub: Subscription): Promise<void> {
  if (sub.running) {
    sub.again = true;
    return;
  }
  sub.running = true;
  const history: RemoteMatch[] = [];
  try {
    do {
      sub.again = false;
      sub.rewindTo = undefined;
      const tip = (await ctx.feed.store.tip())?.height ?? -1;
      let rewound = false;
      while (!sub.cancelled && !ctx.closed && sub.next <= tip) {
        const to = Math.min(sub.next + PAGE_HEIGHTS - 1, tip);
        const found = await scanPage(sub, ctx, sub.next, to);
        // A rollback meanwhile (the indexer's, at `rewindTo`) already put `next` back: what was read
        // from its height on may be orphaned, and the tip is read again before going on.
        const rewind = sub.rewindTo ?? Number.POSITIVE_INFINITY;
        if (rewind !== Number.POSITIVE_INFINITY) {
          rewound = true;
          history.splice(0, history.length, ...history.filter((m) => m.height < rewind));
        } else sub.next = to + 1;
        for (const m of found.filter((f) => f.height < rewind)) {
          sub.found.set(m.txid, m);
          history.push(m);
        }
        if (rewound) break;
        await flushFull(ctx, sub, history, (sub.next - sub.startHeight) / Math.max(1, tip - sub.startHeight + 1));
      }
      if (sub.cancelled || ctx.closed) return;
      if (rewound) {
        sub.again = true;
        continue;
      }
      if (!sub.live || history.length > 0) {
        sub.live = true;
        await flushFull(ctx, sub, history, 1);
        await ctx.notify(SP_METHOD, notification(sub, 1, history.splice(0)));
        sub.onHistoryDone();
      }
      await notifyMempool(ctx, sub);
    } while (sub.again && !sub.cancelled && !ctx.closed);
  } finally {
    sub.running = false;
    if (sub.cancelled || ctx.closed) sub.onHistoryDone();
  }
}
