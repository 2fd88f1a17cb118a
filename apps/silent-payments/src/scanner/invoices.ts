import { satsToBtc } from '../amount';
import { invoiceStatus, isSettled, type InvoiceStatus } from '../invoices';
import type { BlockTransaction, LabelRecord, LabelTotals } from '../store';
import type { ScanContext } from './context';

/** What the invoices are read through: the store, or a transaction of it. */
type LabelReader = Pick<BlockTransaction, 'labelByIndex' | 'labelTotals'>;

/** An invoice as read: its label, totals and status. */
export interface InvoiceState {
  label: LabelRecord;
  status: InvoiceStatus;
  totals: LabelTotals;
}

/** The invoices of the labels (m ≥ 1) `labels`, by m, read through `store`. */
export async function invoiceStatuses(store: LabelReader, ctx: ScanContext, labels: Iterable<number>): Promise<Map<number, InvoiceState>> {
  const invoices = new Map<number, InvoiceState>();
  for (const m of labels) {
    const label = await store.labelByIndex(m);
    if (label === undefined) continue;
    const totals = await store.labelTotals(m);
    invoices.set(m, {
      label,
      totals,
      status: invoiceStatus(label.amountSats, totals.received, totals.pending, ctx.settings.toleranceSats),
    });
  }
  return invoices;
}

/** The invoices of `before` that became paid or overpaid since, read through `store`. */
export async function invoicesPaid(store: LabelReader, ctx: ScanContext, before: Map<number, InvoiceState>): Promise<InvoiceState[]> {
  const after = await invoiceStatuses(store, ctx, before.keys());
  return [...after].filter(([m, invoice]) => isSettled(invoice.status) && invoice.status !== before.get(m)?.status).map(([, i]) => i);
}

/** Publishes `InvoicePaid` for each invoice of `paid`. */
export function publishInvoicesPaid(ctx: ScanContext, paid: readonly InvoiceState[]): void {
  for (const { label, status, totals } of paid) {
    ctx.logger.info({ m: label.m, address: label.address, status, received: satsToBtc(totals.received) }, 'invoice paid');
    ctx.publisher.publish('InvoicePaid', {
      label: label.label,
      address: label.address,
      amount: satsToBtc(label.amountSats),
      received: satsToBtc(totals.received),
      status,
    });
  }
}
