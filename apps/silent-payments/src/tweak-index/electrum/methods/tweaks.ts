import type { StoredTx } from '../../store';
import { ElectrumError, intParam, RPC_ERRORS, type ElectrumContext, type ElectrumMethods } from '../protocol';

/** Heights read from the store at once while streaming. */
const PAGE_HEIGHTS = 10;
const SUBSCRIPTIONS = 'tweaks';
const METHOD = 'blockchain.tweaks.subscribe';

/** One transaction as Cake Wallet reads it: the tweak, and `vout → [x-only key, sats]`. */
interface CakeTx {
  tweak: string;
  output_pubkeys: Record<string, [string, number]>;
}

/** A stream of one `blockchain.tweaks.subscribe` call. */
interface Stream {
  next: number;
  end: number;
  historical: boolean;
  running: boolean;
  again: boolean;
}

/**
 * The transactions of one height as Cake reads them. Historical mode lists every taproot output;
 * otherwise (cut-through) the outputs spent by an indexed block are left out, and so are the
 * transactions with none left.
 */
export function cakeHeight(txs: readonly StoredTx[], historical: boolean): Record<string, CakeTx> {
  const out: Record<string, CakeTx> = {};
  for (const tx of txs) {
    const outputs = historical ? tx.outputs : tx.outputs.filter((o) => o.spentHeight === null);
    if (outputs.length === 0) continue;
    const output_pubkeys: Record<string, [string, number]> = {};
    for (const o of outputs) output_pubkeys[String(o.vout)] = [Buffer.from(o.xonly).toString('hex'), Number(o.value)];
    out[tx.txid] = { tweak: Buffer.from(tx.tweak).toString('hex'), output_pubkeys };
  }
  return out;
}

async function heights(ctx: ElectrumContext, from: number, to: number, historical: boolean): Promise<Array<Record<string, unknown>>> {
  const txs = await ctx.feed.store.txs(from, to);
  const pages: Array<Record<string, unknown>> = [];
  for (let h = from; h <= to; h += 1) {
    pages.push({
      [String(h)]: cakeHeight(
        txs.filter((t) => t.height === h),
        historical,
      ),
    });
  }
  return pages;
}

/** Sends the stream's heights up to the indexed tip (at most its end), then `done` once the end is sent. */
async function pump(ctx: ElectrumContext, stream: Stream, streams: Set<Stream>): Promise<void> {
  if (stream.running) {
    stream.again = true;
    return;
  }
  stream.running = true;
  try {
    do {
      stream.again = false;
      const tip = (await ctx.feed.store.tip())?.height ?? -1;
      while (!ctx.closed && stream.next <= Math.min(stream.end, tip)) {
        const to = Math.min(stream.next + PAGE_HEIGHTS - 1, stream.end, tip);
        for (const page of await heights(ctx, stream.next, to, stream.historical)) await ctx.notify(METHOD, [page]);
        stream.next = to + 1;
      }
    } while (stream.again && !ctx.closed);
    if (stream.next > stream.end && streams.delete(stream)) await ctx.notify(METHOD, [{ message: 'done' }]);
  } finally {
    stream.running = false;
  }
}

function streamsOf(ctx: ElectrumContext): Set<Stream> {
  let streams = ctx.state.get(SUBSCRIPTIONS) as Set<Stream> | undefined;
  if (streams !== undefined) return streams;
  const created = new Set<Stream>();
  streams = created;
  ctx.state.set(SUBSCRIPTIONS, created);
  const onBlock = (): void => {
    for (const s of created) void pump(ctx, s, created).catch(() => undefined);
  };
  // A reorg: heights at and above the rolled-back one are sent again from the new branch.
  const onRollback = (height: number): void => {
    for (const s of created) s.next = Math.min(s.next, height);
  };
  ctx.feed.events.on('block', onBlock);
  ctx.feed.events.on('rollback', onRollback);
  ctx.onClose(() => {
    ctx.feed.events.off('block', onBlock);
    ctx.feed.events.off('rollback', onRollback);
  });
  return created;
}

/** Waits until `height` is indexed (or the connection closes). */
async function indexed(ctx: ElectrumContext, height: number): Promise<void> {
  if (((await ctx.feed.store.tip())?.height ?? -1) >= height) return;
  await new Promise<void>((resolve) => {
    const onBlock = (h: number): void => {
      if (h < height) return;
      ctx.feed.events.off('block', onBlock);
      resolve();
    };
    ctx.feed.events.on('block', onBlock);
    ctx.onClose(() => {
      ctx.feed.events.off('block', onBlock);
      resolve();
    });
  });
}

/**
 * `blockchain.tweaks.subscribe(height, count = 1, historical = false)` as Cake Wallet reads it: the
 * result is the first height's record `{"<height>": {"<txid>": {tweak, output_pubkeys}}}`, then one
 * notification per height up to `height + count - 1` (waiting for blocks not indexed yet), then
 * `{"message": "done"}` (docs/silent-payments.md, "Electrum").
 */
export const tweakMethods: ElectrumMethods = {
  [METHOD]: async (ctx, params) => {
    const height = intParam(params, 0, 'height');
    const count = intParam(params, 1, 'count', 1);
    const historical = params[2] ?? false;
    if (count < 1 || count > ctx.settings.limits.maxCount) {
      throw new ElectrumError(RPC_ERRORS.invalidParams, `count must be 1 to ${ctx.settings.limits.maxCount}`);
    }
    if (typeof historical !== 'boolean') throw new ElectrumError(RPC_ERRORS.invalidParams, 'historical must be a boolean');
    const streams = streamsOf(ctx);
    if (streams.size >= ctx.settings.limits.maxSubscriptions) {
      throw new ElectrumError(RPC_ERRORS.limit, `more than ${ctx.settings.limits.maxSubscriptions} tweak subscriptions open`);
    }
    const { startHeight } = ctx.settings;
    // Below the index's first height there is nothing: the first height answers empty, the stream resumes at the start height.
    if (height >= startHeight) await indexed(ctx, height);
    const [first] = height >= startHeight ? await heights(ctx, height, height, historical) : [{ [String(height)]: {} }];
    const stream: Stream = { next: Math.max(height + 1, startHeight), end: height + count - 1, historical, running: false, again: false };
    streams.add(stream);
    ctx.afterReply(() => void pump(ctx, stream, streams).catch(() => undefined));
    return first;
  },
};
