import { Router } from 'express';
import { AppError } from '@repo/errors';
import type { Logger } from '@repo/service';
import { satsToBtc } from '../amount';
import type { SpNetwork } from '../config';
import { addressScript, createSweepPsbt, FEE_RATE_MAX, FEE_RATE_MIN, PsbtError, type SweepInput } from '../psbt';
import type { PaymentRecord, Store } from '../store';

/** Dependencies of {@link createPsbtRouter}. */
export interface PsbtRouterDeps {
  store: Store;
  network: SpNetwork;
  /** B_spend (33 bytes, compressed): the key of PSBT_IN_SP_SPEND_BIP32_DERIVATION. */
  spendPub: Uint8Array;
  logger: Logger;
}

/** Most outputs one sweep spends (a standard transaction stays far below 100,000 vB). */
export const PSBT_MAX_INPUTS = 500;

function invalid(message: string, details?: string): AppError {
  return new AppError('INVALID_REQUEST', { message, details });
}

/**
 * `POST /psbt` (docs/silent-payments.md, "Sweeping"): `{to, fee_rate, ids?}` → an unsigned
 * version 0 PSBT (base64) spending the outputs `ids` (default: every confirmed unspent output)
 * to `to`, with the fee for the signed size; `b_spend` stays offline (`cli.js sign`).
 */
export function createPsbtRouter(options: PsbtRouterDeps): Router {
  const { store, network, spendPub, logger } = options;
  const router = Router();
  router.post('/psbt', async function createPsbt(req, res) {
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalid('body must be a JSON object', 'send {"to": address, "fee_rate": sat/vB, "ids"?: [payment ids]}');
    }
    const { to, fee_rate: feeRate, ids } = body as { to?: unknown; fee_rate?: unknown; ids?: unknown };
    if (to === undefined) throw new AppError('MISSING_PARAMETER', { message: 'to is required', details: `an address of ${network}` });
    if (typeof to !== 'string' || to.length > 200) throw invalid(`to must be a ${network} address`);
    if (feeRate === undefined) throw new AppError('MISSING_PARAMETER', { message: 'fee_rate is required', details: 'sat/vB' });
    if (typeof feeRate !== 'number' || !Number.isFinite(feeRate) || feeRate < FEE_RATE_MIN || feeRate > FEE_RATE_MAX) {
      throw invalid(`fee_rate must be a number from ${FEE_RATE_MIN} to ${FEE_RATE_MAX} (sat/vB)`);
    }
    let payments: PaymentRecord[];
    if (ids === undefined) {
      payments = await store.listPayments(PSBT_MAX_INPUTS, 0, { status: 'confirmed', spent: false });
      if (payments.length === 0) throw invalid('nothing to sweep: no confirmed unspent output');
    } else {
      if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string')) {
        throw invalid('ids must be a non-empty array of payment ids (<txid>:<vout>)');
      }
      if (ids.length > PSBT_MAX_INPUTS) throw invalid(`ids must hold at most ${PSBT_MAX_INPUTS} payment ids`);
      if (new Set(ids).size !== ids.length) throw invalid('ids must not repeat a payment id');
      const found = await Promise.all((ids as string[]).map((id) => store.getPayment(id)));
      payments = (ids as string[]).map((id, i) => {
        const p = found[i];
        if (p === undefined) throw invalid(`unknown payment id ${id.slice(0, 80)}`);
        if (p.spentTxid !== null) throw invalid(`payment ${id} is already spent by ${p.spentTxid}`);
        if (p.status !== 'confirmed') throw invalid(`payment ${id} is not confirmed yet`);
        return p;
      });
    }
    const inputs: SweepInput[] = payments.map((p) => ({
      txid: p.txid,
      vout: p.vout,
      amountSats: p.amountSats,
      outputKey: p.outputKey,
      tweak: p.tweak,
    }));
    let sweep;
    try {
      sweep = createSweepPsbt(inputs, spendPub, addressScript(to, network), feeRate);
    } catch (err) {
      if (err instanceof PsbtError) throw invalid(err.message);
      throw err;
    }
    logger.info({ inputs: inputs.length, fee_sats: Number(sweep.feeSats), vsize: sweep.vsize }, 'sweep PSBT built');
    res.json({
      psbt: Buffer.from(sweep.psbt).toString('base64'),
      ids: payments.map((p) => p.id),
      to,
      input_total: satsToBtc(sweep.inputSats),
      amount: satsToBtc(sweep.amountSats),
      fee: satsToBtc(sweep.feeSats),
      fee_rate: feeRate,
      vsize: sweep.vsize,
    });
  });
  return router;
}
