import { secp256k1 } from '@noble/curves/secp256k1.js';
import { assertBytes, bytesToBigInt } from './bytes';
import { CURVE_ORDER } from './constants';
import { SilentPaymentError } from './errors';
import { labelTweak } from './tweak';

/**
 * B_m = B_spend + labelTweak(b_scan, m)·G, compressed (33 bytes): the spend key of a labelled address.
 * @throws {TypeError|RangeError} on malformed arguments; {SilentPaymentError} `INVALID_SCALAR`
 *   when the tweak is not a valid scalar or the sum is infinity (negligible probability).
 */
export function labeledSpendPub(scanPriv: Uint8Array, spendPub: Uint8Array, m: number): Uint8Array {
  assertBytes(spendPub, 'spendPub', 33);
  const tweak = bytesToBigInt(labelTweak(scanPriv, m));
  if (tweak === 0n || tweak >= CURVE_ORDER) throw new SilentPaymentError('INVALID_SCALAR', 'label tweak is not a valid scalar');
  let spend;
  try {
    spend = secp256k1.Point.fromBytes(spendPub);
  } catch (error) {
    throw new TypeError('"spendPub" is not a valid compressed secp256k1 point', { cause: error });
  }
  const labeled = spend.add(secp256k1.Point.BASE.multiply(tweak));
  if (labeled.is0()) throw new SilentPaymentError('INVALID_SCALAR', 'labelled spend key is the point at infinity');
  return labeled.toBytes(true);
}
