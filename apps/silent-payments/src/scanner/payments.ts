import { satsToBtc, btcToSats } from '../amount';
import type { BlockTransaction, NewPayment, PaymentRecord, SpendSeen } from '../store';
import type { BlockConsumer } from './apply';
import type { ScanContext } from './context';
import { invoicesPaid, invoiceStatuses, publishInvoicesPaid } from './invoices';
import type { Hit, ScannedBlock } from './scan-block';

/** Payments read at a time when the scanner lists the stored payments' txids. */
const PAYMENT_PAGE = 5_000;

/** The payments of what the receiver found in a transaction. */
export function paymentsOf(ctx: ScanContext, hit: Hit): NewPayment[] {
  const payments: NewPayment[] = [];
  hit.found.forEach((f, i) => {
    const address = ctx.book.addressOf(f.label);
    const value = hit.values[i];
    if (address === undefined || value === undefined) return;
    payments.push({
      txid: hit.txid,
      vout: f.index,
      address,
      labelM: f.label,
      amountSats: btcToSats(value),
      outputKey: f.xonly,
      tweak: f.tweak,
    });
  });
  return payments;
}

/** The spends among `spends` that may concern a stored payment or one of `found` (stored with them). */
export async function spendsOfOurs(
  ctx: ScanContext,
  spends: SpendSeen[],
  found: NewPayment[],
  store: Pick<BlockTransaction, 'listPayments'> = ctx.store,
): Promise<SpendSeen[]> {
  if (ctx.paymentTxids === undefined) {
    const txids = new Set<string>();
    for (let offset = 0; ; offset += PAYMENT_PAGE) {
      const page = await store.listPayments(PAYMENT_PAGE, offset);
      for (const p of page) txids.add(p.txid);
      if (page.length < PAYMENT_PAGE) break;
    }
    ctx.paymentTxids = txids;
  }
  const known = ctx.paymentTxids;
  for (const p of found) known.add(p.txid);
  // a payment id is `txid:vout`
  return spends.filter((s) => known.has(s.id.slice(0, s.id.lastIndexOf(':'))));
}

/** Logs and publishes `PaymentSpent` for each output whose spend was seen (`blockHeight` null: in the mempool). */
export function publishSpent(ctx: ScanContext, spent: PaymentRecord[], blockHeight: number | null): void {
  for (const p of spent) {
    ctx.logger.info(
      { id: p.id, spent_txid: p.spentTxid, block_height: blockHeight },
      blockHeight === null ? 'spend seen in the mempool' : 'spend confirmed',
    );
    ctx.publisher.publish('PaymentSpent', { txid: p.txid, vout: p.vout, spent_txid: p.spentTxid!, block_height: blockHeight });
  }
}

/** Stores a block's payments and the spends of ours among its inputs, with the new progress, in `tx`; returns the events to publish. */
async function applyPayments(ctx: ScanContext, block: ScannedBlock, height: number, tx: BlockTransaction): Promise<() => void> {
  const found = block.hits.flatMap((hit) => paymentsOf(ctx, hit));
  const ours = await spendsOfOurs(ctx, block.spends, found, tx);
  const labelsTouched = new Set(found.map((p) => p.labelM).filter((m): m is number => m !== null && m > 0));
  const invoicesBefore = await invoiceStatuses(tx, ctx, labelsTouched);
  const applied = await tx.applyBlock({ height, hash: block.packed.hash }, found, ours);
  // Read inside the transaction too: the statuses after the block, published once it committed.
  const paid = await invoicesPaid(tx, ctx, invoicesBefore);
  return () => {
    const confirmations = Math.max(1, (ctx.tip ?? height) - height + 1);
    for (const p of applied.payments) {
      ctx.logger.info(
        { id: p.id, txid: p.txid, vout: p.vout, amount: satsToBtc(p.amountSats), address: p.address, block_height: height },
        'payment received',
      );
      ctx.publisher.publish('TransactionReceived', {
        txid: p.txid,
        amount: satsToBtc(p.amountSats),
        address: p.address,
        block_height: height,
        confirmations,
      });
    }
    publishSpent(ctx, applied.spent, height);
    publishInvoicesPaid(ctx, paid);
    ctx.publisher.publish('BlockScanned', {
      block_height: height,
      block_hash: block.packed.hash,
      transactions_count: block.packed.nTx,
      silent_payments_found: applied.payments.length,
    });
  };
}

/** Removes the payments and confirmed spends above `height`; returns the logs and `PaymentReorged` events. */
async function rollbackPayments(ctx: ScanContext, height: number, tx: BlockTransaction): Promise<() => void> {
  const scanned = tx.progress().scannedHeight!;
  const { removed, unspent } = await tx.rollbackAbove(height);
  return () => {
    ctx.logger.warn(
      { from_height: scanned, fork_height: height, payments_removed: removed.length, spends_undone: unspent },
      'reorg: blocks left the best chain, their payments and spends are rolled back',
    );
    for (const p of removed) {
      if (p.blockHeight === null || p.blockHash === null) continue;
      ctx.logger.warn({ id: p.id, old_block_height: p.blockHeight, old_block_hash: p.blockHash }, 'payment left the chain');
      ctx.publisher.publish('PaymentReorged', {
        txid: p.txid,
        vout: p.vout,
        address: p.address,
        amount: satsToBtc(p.amountSats),
        old_block_height: p.blockHeight,
        old_block_hash: p.blockHash,
      });
    }
  };
}

/**
 * The first consumer of every block: the service's own payments, spends and scan progress (the
 * block hash and height a restart resumes after), and their events (`TransactionReceived`,
 * `PaymentSpent`, `InvoicePaid`, `BlockScanned`, `PaymentReorged`) once the block is committed.
 */
export function paymentsConsumer(ctx: ScanContext): BlockConsumer {
  return {
    name: 'payments',
    apply: (block, height, tx) => applyPayments(ctx, block, height, tx),
    rollback: (height, tx) => rollbackPayments(ctx, height, tx),
  };
}
