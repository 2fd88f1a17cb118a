import { satsToBtc } from '../amount';
import { invoiceStatus, isSettled, type InvoiceStatus } from '../invoices';
import type { ScanContext } from './context';

/** Invoice statuses of the labels (m ≥ 1) `labels`, by m. */
export function invoiceStatuses(ctx: ScanContext, labels: Iterable<number>): Map<number, InvoiceStatus> {
  const statuses = new Map<number, InvoiceStatus>();
  for (const m of labels) {
    const label = ctx.store.labelByIndex(m);
    if (label === undefined) continue;
    const totals = ctx.store.labelTotals(m);
    statuses.set(m, invoiceStatus(label.amountSats, totals.received, totals.pending, ctx.settings.toleranceSats));
  }
  return statuses;
}

/** Publishes `InvoicePaid` for each label whose invoice became paid or overpaid since `before`. */
export function publishInvoicesPaid(ctx: ScanContext, before: Map<number, InvoiceStatus>): void {
  const after = invoiceStatuses(ctx, before.keys());
  for (const [m, status] of after) {
    if (!isSettled(status) || status === before.get(m)) continue;
    const label = ctx.store.labelByIndex(m)!;
    const totals = ctx.store.labelTotals(m);
    ctx.logger.info({ m, address: label.address, status, received: satsToBtc(totals.received) }, 'invoice paid');
    ctx.publisher.publish('InvoicePaid', {
      label: label.label,
      address: label.address,
      amount: satsToBtc(label.amountSats),
      received: satsToBtc(totals.received),
      status,
    });
  }
}
