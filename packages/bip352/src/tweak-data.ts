import type { AnySecp256k1Backend } from './backend';
import { loadSecp256k1Backend } from './load-backend';
import { bytesToHex } from './bytes';
import type { ScanInput } from './inputs';
import { computeInputData } from './tweak';

/** The public data of a transaction that any receiver needs (BIP-352 Appendix A "Tweak Data"). */
export interface TweakData {
  /** A, the sum of the eligible input public keys, compressed hex. */
  inputPubKeySum: string;
  /** input_hash, hex. */
  inputHash: string;
  /** input_hash·A, compressed hex: the 33 bytes an index serves to light clients. */
  tweak: string;
}

/**
 * The tweak data of a transaction, or null when it is not eligible (SegWit v2+ spent, no
 * eligible input, or the keys sum to infinity).
 * @throws {SilentPaymentError} `INVALID_SCALAR` (negligible probability).
 */
export function computeTweakData(inputs: readonly ScanInput[], backend?: AnySecp256k1Backend): TweakData | null {
  const b = backend ?? loadSecp256k1Backend('noble');
  const data = computeInputData(b, inputs);
  if (data === null) return null;
  return {
    inputPubKeySum: bytesToHex(b.toCompressed(data.sum)),
    inputHash: bytesToHex(data.inputHash),
    tweak: bytesToHex(b.toCompressed(b.mul(data.sum, data.inputHash))),
  };
}
