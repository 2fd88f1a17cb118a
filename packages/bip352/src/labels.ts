import { secp256k1 } from '@noble/curves/secp256k1.js';
import { assertBytes, assertLabel, bytesToBigInt, ser32 } from './bytes';
import { CURVE_ORDER } from './constants';
import { SilentPaymentError } from './errors';
import { taggedHash } from './hash';

/**
 * The label tweak hash_BIP0352/Label(ser256(b_scan) || ser32(m)) (BIP-352 "Address encoding").
 * m = 0 is the change label, never to be handed out.
 * @throws {TypeError|RangeError} for a scan key that is not 32 bytes or an m outside 0..2^32-1.
 */
export function labelTweak(scanPriv: Uint8Array, m: number): Uint8Array {
  assertBytes(scanPriv, 'scanPriv', 32);
  assertLabel(m);
  return taggedHash('BIP0352/Label', scanPriv, ser32(m));
}

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
