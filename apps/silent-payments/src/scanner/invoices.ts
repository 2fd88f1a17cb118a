import { satsToBtc } from '../amount';
import { invoiceStatus, isSettled, type InvoiceStatus } from '../invoices';
import type { BlockTransaction, LabelRecord, LabelTotals } from '../store';
import type { ScanContext } from './context';

/** What the invoices are read through: the store, or a transaction of it. */
type LabelReader = Pick<BlockTransaction, 'labelByIndex' | 'labelTotals'>;

/** Invoice statuses of the labels (m ≥ 1) `labels`, by m, read through `store`. */
export async function invoiceStatuses(store: LabelReader, ctx: ScanContext, labels: Iterable<number>): Promise<Map<number, InvoiceStatus>> {
  const statuses = new Map<number, InvoiceStatus>();
  for (const m of labels) {
    const label = await store.labelByIndex(m);
    if (label === undefined) continue;
    const totals = await store.labelTotals(m);
    statuses.set(m, invoiceStatus(label.amountSats, totals.received, totals.pending, ctx.settings.toleranceSats));
  }
  return statuses;
}

/** An invoice that became paid or overpaid: its label, status and totals. */
export interface InvoicePaid {
  label: LabelRecord;
  status: InvoiceStatus;
  totals: LabelTotals;
}

/** The labels of `before` whose invoice became paid or overpaid since, read through `store`. */
export async function invoicesPaid(store: LabelReader, ctx: ScanContext, before: Map<number, InvoiceStatus>): Promise<InvoicePaid[]> {
  const after = await invoiceStatuses(store, ctx, before.keys());
  const paid: InvoicePaid[] = [];
  for (const [m, status] of after) {
    if (!isSettled(status) || status === before.get(m)) continue;
    const label = await store.labelByIndex(m);
    if (label !== undefined) paid.push({ label, status, totals: await store.labelTotals(m) });
  }
  return paid;
}

/** Publishes `InvoicePaid` for each invoice of `paid`. */
export function publishInvoicesPaid(ctx: ScanContext, paid: readonly InvoicePaid[]): void {
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
