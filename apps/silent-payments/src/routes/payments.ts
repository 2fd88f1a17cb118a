import { Router } from 'express';
import { AppError } from '@repo/errors';
import { satsToBtc } from '../amount';
import { PAYMENTS_MAX_LIMIT } from '../config';
import type { PaymentRecord, Store } from '../store';

/** Dependencies of {@link paymentRoutes}. */
export interface PaymentRoutesOptions {
  store: Store;
  /** The chain tip for `confirmations` (the node's, as the scanner last saw it). */
  tipHeight: () => number | undefined;
}

function readQueryInt(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
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
  };
}

/**
 * `GET /payments` (limit default 10, at most PAYMENTS_MAX_LIMIT; offset default 0) and
 * `GET /payments/:id` (docs/silent-payments.md, "Endpoints"). Pending payments come first, then the newest block first.
 */
export function paymentRoutes(options: PaymentRoutesOptions): Router {
  const { store } = options;
  const router = Router();
  router.get('/payments', function listPayments(req, res) {
    const limit = readQueryInt(req.query.limit, 'limit', 10, 1, PAYMENTS_MAX_LIMIT);
    const offset = readQueryInt(req.query.offset, 'offset', 0, 0, 1_000_000_000);
    res.json({ payments: store.listPayments(limit, offset).map(listItem), total: store.countPayments(), limit, offset });
  });
  router.get('/payments/:id', function getPayment(req, res) {
    const payment = store.getPayment(req.params.id);
    if (payment === undefined)
      throw new AppError('NOT_FOUND', { message: 'payment not found', details: `no payment with id ${req.params.id.slice(0, 80)}` });
    let confirmations = 0;
    if (payment.blockHeight !== null) {
      const tip = Math.max(options.tipHeight() ?? payment.blockHeight, payment.blockHeight);
      confirmations = tip - payment.blockHeight + 1;
    }
    res.json({ ...listItem(payment), confirmations, status: payment.status });
  });
  return router;
}
