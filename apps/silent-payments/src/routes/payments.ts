import { Router } from 'express';
import { AppError } from '@repo/errors';
import { satsToBtc } from '../amount';
import { CHANGE_LABEL } from '../address-book';
import { LABEL_MAX_LENGTH, PAYMENTS_MAX_LIMIT } from '../config';
import type { PaymentFilter, PaymentRecord, Store } from '../store';

/** Dependencies of {@link createPaymentRouter}. */
export interface PaymentRouterDeps {
  store: Store;
  /** The chain tip for `confirmations` (the node's, as the scanner last saw it). */
  tipHeight: () => number | undefined;
}

/** Reads `limit` and `offset` as `GET /payments` takes them (also used by `GET /labels`). */
export function readPage(query: Record<string, unknown>): { limit: number; offset: number } {
  return {
    limit: readQueryInt(query.limit, 'limit', 10, 1, PAYMENTS_MAX_LIMIT),
    offset: readQueryInt(query.offset, 'offset', 0, 0, 1_000_000_000),
  };
}

function invalidFilter(message: string): AppError {
  return new AppError('INVALID_REQUEST', { message });
}

/**
 * The filters of `GET /payments`: `status` (`pending`, `confirmed`), `spent` (`true`, `false`),
 * `label` (a label string). Returns undefined when the label is unknown (nothing can match).
 */
async function readFilter(query: Record<string, unknown>, store: Store): Promise<PaymentFilter | undefined> {
  const filter: PaymentFilter = {};
  const { status, spent, label } = query;
  if (status !== undefined) {
    if (status !== 'pending' && status !== 'confirmed') throw invalidFilter('status must be pending or confirmed');
    filter.status = status;
  }
  if (spent !== undefined) {
    if (spent !== 'true' && spent !== 'false') throw invalidFilter('spent must be true or false');
    filter.spent = spent === 'true';
  }
  if (label !== undefined) {
    if (typeof label !== 'string' || label.trim() === '' || [...label].length > LABEL_MAX_LENGTH) {
      throw invalidFilter(`label must be a non-empty string of at most ${LABEL_MAX_LENGTH} characters`);
    }
    const record = await store.findLabel(label);
    if (record === undefined) return undefined;
    filter.labelM = record.m;
  }
  return filter;
}

function readQueryInt(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  // Digits only (no sign, exponent or fraction); up to 10 of them, so the largest bound (1000000000) is taken.
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new AppError('INVALID_REQUEST', { message: `${name} must be an integer from ${min} to ${max}` });
  }
  return Number(value);
}

function listItem(p: PaymentRecord) {
  return {
    id: p.id,
    address: p.address,
    amount: satsToBtc(p.amountSats),
    txid: p.txid,
    vout: p.vout,
    block_height: p.blockHeight,
    created_at: p.createdAt,
    spent: p.spentTxid !== null,
  };
}

/**
 * `GET /payments` (limit default 10, at most PAYMENTS_MAX_LIMIT; offset default 0) and
 * `GET /payments/:id` (docs/silent-payments.md, "Endpoints"; the spend data: "Spend data"), `GET /balance` ("Balance"). Pending payments come first, then the newest block first.
 */
export function createPaymentRouter(options: PaymentRouterDeps): Router {
  const { store } = options;
  const router = Router();
  router.get('/payments', async function listPayments(req, res) {
    const query = req.query as Record<string, unknown>;
    const { limit, offset } = readPage(query);
    const filter = await readFilter(query, store);
    if (filter === undefined) {
      res.json({ payments: [], total: 0, limit, offset });
      return;
    }
    const [payments, total] = await Promise.all([store.listPayments(limit, offset, filter), store.countPayments(filter)]);
    res.json({ payments: payments.map(listItem), total, limit, offset });
  });
  router.get('/balance', async function getBalance(_req, res) {
    const b = await store.balance();
    res.json({
      confirmed: satsToBtc(b.confirmed),
      pending: satsToBtc(b.pending),
      spent_pending: satsToBtc(b.spentPending),
      utxo_count: b.utxoCount,
    });
  });
  router.get('/payments/:id', async function getPayment(req, res) {
    const payment = await store.getPayment(req.params.id);
    if (payment === undefined)
      throw new AppError('NOT_FOUND', { message: 'payment not found', details: `no payment with id ${req.params.id.slice(0, 80)}` });
    let confirmations = 0;
    if (payment.blockHeight !== null) {
      const tip = Math.max(options.tipHeight() ?? payment.blockHeight, payment.blockHeight);
      confirmations = tip - payment.blockHeight + 1;
    }
    const label =
      payment.labelM === null || payment.labelM === CHANGE_LABEL ? null : ((await store.labelByIndex(payment.labelM))?.label ?? null);
    res.json({
      ...listItem(payment),
      confirmations,
      status: payment.status,
      output_key: payment.outputKey,
      tweak: payment.tweak,
      label,
      spent_txid: payment.spentTxid,
      spent_height: payment.spentHeight,
    });
  });
  return router;
}
