import type { AnySecp256k1Backend } from './backend';
import { bytesToBigInt } from './bytes';
import { CURVE_ORDER } from './constants';
import { SilentPaymentError } from './errors';
import { taggedHash } from './hash';
import { extractInputPublicKey, smallestOutpoint, spendsUnknownSegwit, type ScanInput } from './inputs';

/** Whether 0 < s < n (BIP-352: a tagged hash that is not a valid scalar makes the protocol fail). */
export function isValidScalar(s: Uint8Array): boolean {
  const v = bytesToBigInt(s);
  return v > 0n && v < CURVE_ORDER;
}

/** Throws `INVALID_SCALAR` unless 0 < s < n. */
export function assertValidScalar(s: Uint8Array, what: string): void {
  if (!isValidScalar(s)) throw new SilentPaymentError('INVALID_SCALAR', `${what} is not a valid scalar`);
}

/** What a receiver derives from a transaction's inputs, before its scan key comes in. */
export interface InputData<P> {
  /** A = sum of the eligible input public keys. */
  sum: P;
  /** input_hash = hash_BIP0352/Inputs(outpoint_L || ser_P(A)). */
  inputHash: Uint8Array;
}

/**
 * The receiver's view of the inputs (BIP-352 "Scanning"): null when the transaction is not to be
 * scanned (spends SegWit v2+, no eligible input, or A is the point at infinity).
 */
export function computeInputData<P>(backend: AnySecp256k1Backend, inputs: readonly ScanInput[]): InputData<P> | null {
  if (inputs.length === 0 || spendsUnknownSegwit(inputs)) return null;
  const points: P[] = [];
  for (const input of inputs) {
    const key = extractInputPublicKey(input);
    if (key === null) continue;
    const point = backend.pointFromCompressed(key) as P | null;
    if (point !== null) points.push(point);
  }
  if (points.length === 0) return null;
  const sum = backend.sum(points) as P | null;
  if (sum === null) return null;
  const inputHash = taggedHash('BIP0352/Inputs', smallestOutpoint(inputs), backend.toCompressed(sum));
  assertValidScalar(inputHash, 'input_hash');
  return { sum, inputHash };
}
