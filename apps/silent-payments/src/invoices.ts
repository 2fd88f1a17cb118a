import type { LabelRecord, LabelTotals } from './store';

/**
 * The status of an invoice (a label, docs/silent-payments.md, "Invoices"): `paid` when the
 * confirmed total is the amount asked (within the tolerance, INVOICE_TOLERANCE_SATS, default 0),
 * `overpaid` above it, `partial` when something but not enough has confirmed, `pending` when
 * nothing has confirmed but a payment waits in the mempool, `unpaid` otherwise.
 */
export type InvoiceStatus = 'unpaid' | 'pending' | 'partial' | 'paid' | 'overpaid';

/** Computes an invoice's status from what was asked and what arrived (satoshis). */
export function invoiceStatus(amount: bigint, received: bigint, pending: bigint, toleranceSats: bigint): InvoiceStatus {
  if (received > amount + toleranceSats) return 'overpaid';
  if (received >= amount - toleranceSats && received > 0n) return 'paid';
  if (received > 0n) return 'partial';
  if (pending > 0n) return 'pending';
  return 'unpaid';
}

/** True for the statuses that settle an invoice (an `InvoicePaid` event is published on reaching one). */
export function isSettled(status: InvoiceStatus): boolean {
  return status === 'paid' || status === 'overpaid';
}

/** A label and its totals as one invoice. */
export interface Invoice {
  label: LabelRecord;
  totals: LabelTotals;
  status: InvoiceStatus;
}
