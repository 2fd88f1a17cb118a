import type { ElectrumContext } from '../electrum/protocol';
import { foundChanged } from './found-outputs';
import { MEMPOOL_MAX_TXS } from '../mempool';
import type { StoredTx } from '../store';
import type { RemoteMatch } from './scan-rows';
import type { WalletKeys } from './wallet-keys';

/** The notification's method (Frigate's README, "Electrum protocol"). */
export const SP_METHOD = 'blockchain.silentpayments.subscribe';
/**
 * Heights read from the store at once: the store's read runs on the main thread (SQLite's
 * synchronously), so a page is kept small enough that it never holds the other connections back
 * long (5 dense blocks of 2,500 transactions: about 0.2 s); the next page is read while the
 * workers scan this one.
 */
export const PAGE_HEIGHTS = 5;
/**
 * Rows of one job of the scan pool: the unit the workers are shared by (another wallet's new
 * block waits for at most one job a worker, tens of milliseconds).
 */
const ROW_CHUNK = 512;
/** History entries in one notification at most (Frigate's suggested page). */
export const HISTORY_PAGE = 100;
/**
 * During a history scan, a notification goes out at least this often (with what was found since
 * the last one, or none): the wallet sees the progress of a long restore, as Frigate's is sent.
 */
export const PROGRESS_INTERVAL_MS = 1_000;

/** The subscribe result, repeated byte for byte in each notification (Frigate's README, "blockchain.silentpayments.subscribe"). */
export interface SubscriptionInfo {
  address: string;
  /** The labels scanned, ascending: the change label 0 and those asked. */
  labels: number[];
  start_height: number;
}

/** One wallet subscribed on one connection; its keys live here and nowhere else. */
export interface Subscription {
  keys: WalletKeys;
  /** What the subscribe answered (`start_height`: the first height scanned). */
  info: SubscriptionInfo;
  /** The last height of a closed range (`start` "FROM-TO"): nothing above it is scanned, nor the mempool; undefined: open. */
  endHeight: number | undefined;
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
  /**
   * The mempool transactions notified (height 0) and not seen in a block since: one that confirms
   * is not notified again, nor one that left the mempool and came back.
   */
  sentMempool: Set<string>;
  /**
   * The mempool transactions to scan next: `all` until the first mempool scan (after the history),
   * then those the indexer added since (its `mempool` events), so an event costs its own rows only.
   */
  mempoolNew: Set<string> | 'all';
  /** When the last notification was sent (`Date.now()`): the history scan sends one at least every {@link PROGRESS_INTERVAL_MS}. */
  notedAt: number;
  /** Called once when the history scan ends or is cancelled (frees the scan slot). */
  onHistoryDone: () => void;
}

/** A page of index rows being read. */
interface Page {
  from: number;
  to: number;
  rows: Promise<StoredTx[]>;
}

/** Starts reading `from`…`to`: a live subscription's from the shared rows (a new block's, the same for every live wallet). */
function readPage(sub: Subscription, ctx: ElectrumContext, from: number, to: number): Page {
  const rows = (sub.live ? ctx.settings.sharedRows : ctx.feed.store).txs(from, to);
  rows.catch(() => undefined); // a page read ahead and left (a reorg, a cancel) fails unheard; the one awaited throws
  return { from, to, rows };
}

/** What `rows` hold that pays the wallet: the rows in jobs of the scan pool, all queued at once (the workers take them in turn with other wallets'). */
async function scanRows(sub: Subscription, ctx: ElectrumContext, rows: readonly StoredTx[]): Promise<RemoteMatch[]> {
  if (sub.cancelled || ctx.closed) return [];
  const jobs: Array<Promise<RemoteMatch[]>> = [];
  for (let i = 0; i < rows.length; i += ROW_CHUNK)
    jobs.push(ctx.settings.scanPool.scan(sub, sub.keys, rows.slice(i, i + ROW_CHUNK), sub.live));
  return (await Promise.all(jobs)).flat();
}

/** A notification's params, positional as Electrum's are: `[subscription, progress, history]`. */
function notification(sub: Subscription, progress: number, history: readonly RemoteMatch[]): unknown[] {
  sub.notedAt = Date.now();
  return [sub.info, progress, history.map((m) => ({ height: m.height, tx_hash: m.txid, tweak_key: m.tweak }))];
}

/** Tells a subscription of mempool transactions the indexer added (its `mempool` event). */
export function mempoolAdded(sub: Subscription, txids: readonly string[]): void {
  if (sub.mempoolNew === 'all') return;
  for (const txid of txids) sub.mempoolNew.add(txid);
  // More than the mempool index holds: reading it whole is cheaper.
  if (sub.mempoolNew.size > MEMPOOL_MAX_TXS) sub.mempoolNew = 'all';
}

/**
 * The mempool transactions not scanned yet that pay the wallet (height 0), once the history is
 * complete: the whole mempool the first time, then the transactions added since; a transaction
 * already found (in the mempool or in a block) is not repeated.
 */
async function scanMempool(ctx: ElectrumContext, sub: Subscription): Promise<RemoteMatch[]> {
  const { mempool } = ctx.feed;
  if (mempool === undefined || !sub.live || sub.endHeight !== undefined) return [];
  const wanted = sub.mempoolNew;
  sub.mempoolNew = new Set();
  const rows = wanted === 'all' ? mempool.rows() : [...wanted].flatMap((txid) => mempool.get(txid) ?? []);
  const fresh: RemoteMatch[] = [];
  for (const m of await scanRows(sub, ctx, rows)) {
    if (sub.found.has(m.txid)) continue;
    sub.found.set(m.txid, m);
    if (sub.sentMempool.has(m.txid)) continue;
    sub.sentMempool.add(m.txid);
    fresh.push(m);
  }
  return fresh;
}

/**
 * Forgets the mempool matches that left the node's mempool unmined (the indexer's `mempool-gone`):
 * the script-hash methods stop serving them. Returns whether any was found.
 */
export function mempoolGone(sub: Subscription, txids: readonly string[]): boolean {
  let dropped = false;
  for (const txid of txids) {
    if (sub.found.get(txid)?.height !== 0) continue;
    sub.found.delete(txid);
    dropped = true;
  }
  return dropped;
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

/** During the history scan, what was found since the last notification (maybe nothing) once {@link PROGRESS_INTERVAL_MS} passed. */
async function notifyProgress(ctx: ElectrumContext, sub: Subscription, history: RemoteMatch[], progress: number): Promise<void> {
  if (sub.live || sub.cancelled || Date.now() - sub.notedAt < (ctx.settings.progressIntervalMs ?? PROGRESS_INTERVAL_MS)) return;
  await ctx.notify(SP_METHOD, notification(sub, Math.min(progress, 0.999), history.splice(0)));
}

/**
 * Scans the subscription's heights up to the indexed tip and notifies what pays the wallet: during
 * the history scan pages of at most 100 entries with `progress` < 1.0, and at least every second
 * the progress with what was found since (maybe nothing), then one notification with
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
      const tip = Math.min((await ctx.feed.store.tip())?.height ?? -1, sub.endHeight ?? Number.POSITIVE_INFINITY);
      let rewound = false;
      let ahead: Page | undefined;
      while (!sub.cancelled && !ctx.closed && sub.next <= tip) {
        const to = Math.min(sub.next + PAGE_HEIGHTS - 1, tip);
        const page = ahead?.from === sub.next && ahead.to === to ? ahead : readPage(sub, ctx, sub.next, to);
        const scanning = scanRows(sub, ctx, await page.rows);
        // The next page is read while the workers scan this one.
        ahead = to < tip && !sub.cancelled ? readPage(sub, ctx, to + 1, Math.min(to + PAGE_HEIGHTS, tip)) : undefined;
        const found = await scanning;
        // A rollback meanwhile (the indexer's, at `rewindTo`) already put `next` back: what was read
        // from its height on may be orphaned, and the tip is read again before going on.
        const rewind = sub.rewindTo ?? Number.POSITIVE_INFINITY;
        if (rewind !== Number.POSITIVE_INFINITY) {
          rewound = true;
          history.splice(0, history.length, ...history.filter((m) => m.height < rewind));
        } else sub.next = to + 1;
        for (const m of found.filter((f) => f.height < rewind)) {
          const sentFromMempool = sub.sentMempool.delete(m.txid);
          sub.found.set(m.txid, m);
          // A mempool transaction already sent is not sent again when it confirms (the wallet follows it by script hash).
          if (!sentFromMempool) history.push(m);
        }
        if (rewound) break;
        const progress = (sub.next - sub.info.start_height) / Math.max(1, tip - sub.info.start_height + 1);
        await flushFull(ctx, sub, history, progress);
        if (sub.next <= tip) await notifyProgress(ctx, sub, history, progress);
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
      foundChanged(ctx);
    } while (sub.again && !sub.cancelled && !ctx.closed);
  } finally {
    sub.running = false;
    if (sub.cancelled || ctx.closed) sub.onHistoryDone();
  }
}
