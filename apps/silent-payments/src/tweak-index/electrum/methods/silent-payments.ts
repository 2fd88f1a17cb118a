import { loadSecp256k1Backend, type AnySecp256k1Backend } from '@repo/bip352';
import type { RemoteMatch } from '../../remote-scan/scan-rows';
import { foundChanged } from '../../remote-scan/found-outputs';
import { mempoolAdded, mempoolGone, pumpSubscription, SP_METHOD, type Subscription } from '../../remote-scan/subscription';
import { labelsParam, readWalletKeys } from '../../remote-scan/wallet-keys';
import { ElectrumError, RPC_ERRORS, type ElectrumContext, type ElectrumMethods, type IndexFeed } from '../protocol';

const STATE = 'silentpayments';
/** `start` values above it are timestamps (seconds), as Frigate reads them. */
const TIMESTAMP_FROM = 500_000_000;

let backend: AnySecp256k1Backend | undefined;
const scanBackend = (): AnySecp256k1Backend => (backend ??= loadSecp256k1Backend());

/** History scans running per client address, per server (the feed is the server's). */
const scansByFeed = new WeakMap<IndexFeed, Map<string, number>>();

function scansOf(ctx: ElectrumContext): Map<string, number> {
  let scans = scansByFeed.get(ctx.feed);
  if (scans === undefined) {
    scans = new Map();
    scansByFeed.set(ctx.feed, scans);
  }
  return scans;
}

/** The connection's subscriptions by address; the first call hooks the indexer's events and the close. */
function subscriptionsOf(ctx: ElectrumContext): Map<string, Subscription> {
  const existing = ctx.state.get(STATE) as Map<string, Subscription> | undefined;
  if (existing !== undefined) return existing;
  const subs = new Map<string, Subscription>();
  ctx.state.set(STATE, subs);
  const onBlock = (): void => {
    for (const s of subs.values()) void pumpSubscription(ctx, s).catch(() => undefined);
  };
  const onMempool = (txids: string[]): void => {
    for (const s of subs.values()) mempoolAdded(s, txids);
    onBlock();
  };
  const onMempoolGone = (txids: string[]): void => {
    let dropped = false;
    for (const s of subs.values()) dropped = mempoolGone(s, txids) || dropped;
    if (dropped) foundChanged(ctx);
  };
  // A reorg: every subscription scans again from the fork (the blocks of the new branch follow).
  const onRollback = (height: number): void => {
    for (const s of subs.values()) {
      s.next = Math.min(s.next, Math.max(height, s.info.start_height));
      s.rewindTo = Math.min(s.rewindTo ?? height, height);
      for (const [txid, m] of s.found) if (m.height >= height) s.found.delete(txid);
    }
  };
  ctx.feed.events.on('block', onBlock);
  ctx.feed.events.on('mempool', onMempool);
  ctx.feed.events.on('mempool-gone', onMempoolGone);
  ctx.feed.events.on('rollback', onRollback);
  ctx.onClose(() => {
    ctx.feed.events.off('block', onBlock);
    ctx.feed.events.off('mempool', onMempool);
    ctx.feed.events.off('mempool-gone', onMempoolGone);
    ctx.feed.events.off('rollback', onRollback);
    for (const s of subs.values()) drop(ctx, s);
    subs.clear();
  });
  return subs;
}

/** The transactions the connection's subscriptions found, by txid. */
export function foundByConnection(ctx: ElectrumContext): Map<string, RemoteMatch> {
  const found = new Map<string, RemoteMatch>();
  const subs = ctx.state.get(STATE) as Map<string, Subscription> | undefined;
  for (const s of subs?.values() ?? []) for (const [txid, m] of s.found) found.set(txid, m);
  return found;
}

/** Cancels a subscription, drops its jobs not yet started and zeroes its keys. */
function drop(ctx: ElectrumContext, sub: Subscription): void {
  sub.cancelled = true;
  ctx.settings.scanPool.forget(sub);
  sub.keys.wipe();
  sub.found.clear();
  sub.sentMempool.clear();
  sub.onHistoryDone();
}

/** The heights a subscription scans: from `start`, up to `end` (a closed range) or on with the chain. */
interface ScanRange {
  start: number;
  end: number | undefined;
}

const RANGE = /^(\d{1,10})-(\d{1,10})$/;
const BAD_START = 'start must be a block height, a timestamp above 500000000, or a "FROM-TO" range of heights';

/**
 * `start` as Frigate reads it: a height; above 500,000,000 a time (the first indexed block at or
 * after it); or a string "FROM-TO", a closed range of heights. Never below the first indexed height.
 */
async function resolveStart(ctx: ElectrumContext, start: unknown): Promise<ScanRange> {
  const first = ctx.settings.startHeight;
  if (start === undefined || start === null) return { start: first, end: undefined };
  if (typeof start === 'string') {
    const range = RANGE.exec(start);
    const [from, to] = [Number(range?.[1]), Number(range?.[2])];
    if (range === null || from > to) throw new ElectrumError(RPC_ERRORS.invalidParams, BAD_START);
    return { start: Math.max(from, first), end: to };
  }
  if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) throw new ElectrumError(RPC_ERRORS.invalidParams, BAD_START);
  if (start <= TIMESTAMP_FROM) return { start: Math.max(start, first), end: undefined };
  const tip = (await ctx.feed.store.tip())?.height;
  if (tip === undefined) return { start: first, end: undefined };
  let [lo, hi] = [first, tip + 1];
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const [block] = await ctx.feed.store.blocks(mid, mid);
    if (block !== undefined && block.time >= start) hi = mid;
    else lo = mid + 1;
  }
  return { start: lo, end: undefined };
}

/** The wider of two range ends (undefined: open, the widest). */
function widerEnd(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : Math.max(a, b);
}

/** Takes a history-scan slot of the connection and of its address, or refuses with a limit error. */
function takeScanSlot(ctx: ElectrumContext, subs: Map<string, Subscription>): () => void {
  const { maxScansPerConnection, maxScansPerIp } = ctx.settings.limits;
  const running = [...subs.values()].filter((s) => !s.live && !s.cancelled).length;
  if (running >= maxScansPerConnection) {
    throw new ElectrumError(RPC_ERRORS.limit, `more than ${maxScansPerConnection} silent-payment scans running on this connection`);
  }
  const scans = scansOf(ctx);
  const ip = ctx.remoteAddress;
  if ((scans.get(ip) ?? 0) >= maxScansPerIp) {
    throw new ElectrumError(RPC_ERRORS.limit, `more than ${maxScansPerIp} silent-payment scans running from this address`);
  }
  scans.set(ip, (scans.get(ip) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (scans.get(ip) ?? 1) - 1;
    if (left === 0) scans.delete(ip);
    else scans.set(ip, left);
  };
}

/**
 * Frigate's remote scanning (docs/silent-payments.md, "Remote scanning (Frigate's methods)"):
 * `blockchain.silentpayments.subscribe(scan_private_key, spend_public_key, start, labels)` answers
 * `{address, labels, start_height}`, then notifies the history and each new block's payments;
 * `blockchain.silentpayments.unsubscribe(scan_private_key, spend_public_key)` drops the keys.
 */
export const silentPaymentMethods: ElectrumMethods = {
  [SP_METHOD]: async (ctx, params) => {
    const { limits, network } = ctx.settings;
    const labels = labelsParam(params[3], limits.maxLabels);
    const range = await resolveStart(ctx, params[2]);
    const keys = readWalletKeys(params, labels, network, scanBackend());
    const subs = subscriptionsOf(ctx);
    const previous = subs.get(keys.address);
    if (previous === undefined && subs.size >= limits.maxWallets) {
      keys.wipe();
      throw new ElectrumError(RPC_ERRORS.invalidParams, `more than ${limits.maxWallets} silent-payment subscriptions on this connection`);
    }
    if (previous !== undefined) {
      drop(ctx, previous);
      subs.delete(keys.address);
    }
    let release: () => void;
    try {
      release = takeScanSlot(ctx, subs);
    } catch (error) {
      keys.wipe();
      throw error;
    }
    // Never narrow a wallet's coverage: a re-subscription keeps the lower start (and the wider end), and scans it all again.
    const start = Math.min(range.start, previous?.info.start_height ?? range.start);
    const end = previous === undefined ? range.end : widerEnd(range.end, previous.endHeight);
    const info = { address: keys.address, labels: [0, ...keys.labels].sort((a, b) => a - b), start_height: start };
    const sub: Subscription = {
      keys,
      info,
      endHeight: end,
      next: start,
      rewindTo: undefined,
      live: false,
      running: false,
      again: false,
      cancelled: false,
      found: new Map(),
      sentMempool: new Set(),
      mempoolNew: 'all',
      notedAt: Date.now(),
      onHistoryDone: release,
    };
    subs.set(keys.address, sub);
    ctx.afterReply(() => void pumpSubscription(ctx, sub).catch(() => undefined));
    return info;
  },
  'blockchain.silentpayments.unsubscribe': async (ctx, params) => {
    const keys = readWalletKeys(params, [], ctx.settings.network, scanBackend());
    const { address } = keys;
    keys.wipe();
    const subs = subscriptionsOf(ctx);
    const sub = subs.get(address);
    if (sub !== undefined) {
      drop(ctx, sub);
      subs.delete(address);
      // The script hashes it served go empty: their subscribers get a null status.
      foundChanged(ctx);
    }
    return Promise.resolve(address);
  },
};
