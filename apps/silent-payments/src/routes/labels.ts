import { Router } from 'express';
import { AppError } from '@repo/errors';
import { satsToBtc } from '../amount';
import { invoiceStatus } from '../invoices';
import type { LabelRecord, Store } from '../store';
import { readPage } from './payments';

/** Dependencies of {@link createLabelRouter}. */
export interface LabelRouterDeps {
  store: Store;
  /** INVOICE_TOLERANCE_SATS: how far from the amount a confirmed total still counts as paid. */
  toleranceSats: bigint;
}

/**
 * `GET /labels/:label` and `GET /labels` (docs/silent-payments.md, "Invoices"): each label is an
 * invoice `{label, address, amount, received, pending, status, created_at, payments}`; the list
 * is paged like `GET /payments` (oldest label first).
 */
export function createLabelRouter(options: LabelRouterDeps): Router {
  const { store, toleranceSats } = options;
  const router = Router();

  async function invoice(label: LabelRecord) {
    const totals = await store.labelTotals(label.m);
    return {
      label: label.label,
      address: label.address,
      amount: satsToBtc(label.amountSats),
      received: satsToBtc(totals.received),
      pending: satsToBtc(totals.pending),
      status: invoiceStatus(label.amountSats, totals.received, totals.pending, toleranceSats),
      created_at: label.createdAt,
      payments: totals.payments,
    };
  }

  router.get('/labels', async function listLabels(req, res) {
    const { limit, offset } = readPage(req.query);
    const labels = await store.listLabels(limit, offset);
    res.json({ labels: await Promise.all(labels.map(invoice)), total: await store.countLabels(), limit, offset });
  });
  router.get('/labels/:label', async function getLabel(req, res) {
    const label = await store.findLabel(req.params.label);
    if (label === undefined) {
      throw new AppError('NOT_FOUND', { message: 'label not found', details: `no label ${JSON.stringify(req.params.label.slice(0, 80))}` });
    }
    res.json(await invoice(label));
  });
  return router;
}
