import type { AnySecp256k1Backend } from './backend';
import { loadSecp256k1Backend } from './load-backend';
import { bytesToHex } from './bytes';
import { smallestOutpoint, type ScanInput } from './inputs';
import { SilentPaymentError } from './errors';
import { computeInputData, eligibleInputKeys } from './tweak';

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

/**
 * The tweaks (input_hash·A, 33 bytes compressed: what an index serves to light clients) of many
 * transactions, each given by its inputs (with prevout scripts): null for one that is not
 * eligible or whose input_hash is not a valid scalar (negligible probability). The backend is
 * `backend`, else the default (native). With the native backend one call into C for all of them, eight at a time sharing their inversions
 * (native/README.md, "Tweaks"); with the others {@link computeTweakData}'s steps one by one.
 */
export function computeTweaks(txs: readonly (readonly ScanInput[])[], backend?: AnySecp256k1Backend): Array<Uint8Array | null> {
  const b = backend ?? loadSecp256k1Backend();
  if (b.tweaks === undefined) {
    return txs.map((inputs) => {
      try {
        const data = computeInputData(b, inputs);
        return data === null ? null : b.toCompressed(b.mul(data.sum, data.inputHash));
      } catch (err) {
        if (err instanceof SilentPaymentError && err.code === 'INVALID_SCALAR') return null;
        throw err;
      }
    });
  }
  const answers: Array<Uint8Array | null> = new Array<Uint8Array | null>(txs.length).fill(null);
  const jobs: Array<{ keys: Uint8Array; outpoint: Uint8Array }> = [];
  const at: number[] = [];
  txs.forEach((inputs, i) => {
    const keys = eligibleInputKeys(inputs);
    if (keys === null) return;
    const keyBytes = new Uint8Array(33 * keys.length);
    keys.forEach((key, j) => keyBytes.set(key, 33 * j));
    jobs.push({ keys: keyBytes, outpoint: smallestOutpoint(inputs) });
    at.push(i);
  });
  b.tweaks(jobs).forEach((tweak, j) => {
    answers[at[j]!] = tweak;
  });
  return answers;
}
