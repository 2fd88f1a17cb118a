import { RpcError } from '@repo/errors';
import { isP2trHex } from '@repo/bip352';
import { satsToBtc } from '../amount';
import { tellMempool } from './apply';
import { yieldToEventLoop, type ScanContext } from './context';
import { paymentsOf, publishSpent, spendsOfOurs } from './payments';
import { RPC_BATCH, resolvePrevouts } from './prevouts';
import { scanTransactions, spendsOf } from './scan-block';
import type { RpcTransaction } from './types';

/**
 * Forgets what left the mempool without a block: pending payments and pending spends whose
 * transaction is gone. Gone may also mean mined in a block not scanned yet: then the block
 * decides, not this pass (the next pass reads the chain).
 */
async function dropGone(ctx: ScanContext, current: Set<string>): Promise<void> {
  const { store, logger } = ctx;
  const pendingGone = (await store.pendingTxids()).filter((txid) => !current.has(txid));
  const spendsLeft = (await store.pendingSpendTxids()).filter((txid) => !current.has(txid));
  if (pendingGone.length === 0 && spendsLeft.length === 0) return;
  if ((await ctx.rpc.call<number>('getblockcount', [])) !== ctx.tip) {
    ctx.blockSignal = true;
    return;
  }
  if (pendingGone.length > 0) {
    const removed = await store.removePending(pendingGone);
    logger.info({ txids: pendingGone, payments_removed: removed }, 'pending payments left the mempool unconfirmed');
  }
  if (spendsLeft.length > 0) {
    const unspent = await store.clearPendingSpends(spendsLeft);
    logger.info({ txids: spendsLeft, outputs_unspent: unspent }, 'spends left the mempool unconfirmed: outputs unspent again');
  }
}

/** Scans a chunk of new mempool transactions: pending payments and pending spends of ours. */
async function scanChunk(ctx: ScanContext, chunk: string[]): Promise<void> {
  const answers = await ctx.rpc.batch(chunk.map((txid) => ({ method: 'getrawtransaction', params: [txid, 1] })));
  const txs: RpcTransaction[] = [];
  for (const answer of answers) {
    // An error: gone from the mempool between the two calls (mined or replaced).
    if (!(answer instanceof RpcError) && answer !== null && typeof answer === 'object') txs.push(answer as RpcTransaction);
  }
  // Only transactions with a taproot output can pay us: resolve the prevouts of those only.
  const candidates = txs.filter((tx) => tx.vout.some((o) => isP2trHex(o.scriptPubKey.hex)));
  await resolvePrevouts(ctx.rpc, candidates);
  const resolved = candidates.filter((tx) => {
    if (tx.vin.every((vin) => vin.prevout !== undefined)) return true;
    ctx.logger.debug({ txid: tx.txid }, 'mempool transaction left for its block: spent scripts unknown (no txindex?)');
    return false;
  });
  tellMempool(ctx, (consumer) => consumer.mempool?.(resolved));
  const { hits, skipped } = scanTransactions(ctx, resolved);
  for (const s of skipped) ctx.logger.error({ txid: s.txid, err: s.error }, 'transaction skipped: cannot be scanned');
  const found = hits.flatMap((hit) => paymentsOf(ctx, hit));
  for (const p of await ctx.store.addPending(found)) {
    ctx.logger.info({ id: p.id, txid: p.txid, amount: satsToBtc(p.amountSats), address: p.address }, 'pending payment seen in the mempool');
  }
  // Every transaction, taproot output or not, may spend one of ours.
  publishSpent(ctx, await ctx.store.markSpentPending(await spendsOfOurs(ctx, txs.flatMap(spendsOf), found)), null);
}

/** One pass over the mempool (`txids`: its `getrawmempool`, when already fetched). */
export async function pollMempool(ctx: ScanContext, txids?: string[]): Promise<void> {
  txids ??= await ctx.rpc.call<string[]>('getrawmempool', []);
  const current = new Set(txids);
  for (const txid of ctx.mempoolSeen) if (!current.has(txid)) ctx.mempoolSeen.delete(txid);
  tellMempool(ctx, (consumer) => consumer.mempoolNow?.(current));
  await dropGone(ctx, current);
  const fresh = txids.filter((txid) => !ctx.mempoolSeen.has(txid));
  for (let i = 0; i < fresh.length && !ctx.stopped; i += RPC_BATCH) {
    const chunk = fresh.slice(i, i + RPC_BATCH);
    await scanChunk(ctx, chunk);
    // Only now: a chunk cut short by a node failure is fetched again on the next pass.
    for (const txid of chunk) ctx.mempoolSeen.add(txid);
    await yieldToEventLoop();
  }
}
