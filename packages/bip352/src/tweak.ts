import type { Secp256k1Backend } from './backend';
import { assertBytes, assertLabel, bigIntTo32, ser32 } from './bytes';
import { CURVE_ORDER } from './constants';
import { SilentPaymentError } from './errors';
import { taggedHash } from './hash';
import { extractInputPublicKey, smallestOutpoint, spendsUnknownSegwit, type ScanInput } from './inputs';

const ORDER_BYTES = bigIntTo32(CURVE_ORDER);

/** Whether 0 < s < n (BIP-352: a tagged hash that is not a valid scalar makes the protocol fail). */
export function isValidScalar(s: Uint8Array): boolean {
  if (s.length !== 32) return false;
  let zero = true;
  for (let i = 0; i < 32; i++) {
    if (s[i] !== 0) {
      zero = false;
      break;
    }
  }
  if (zero) return false;
  for (let i = 0; i < 32; i++) {
    const a = s[i] as number;
    const n = ORDER_BYTES[i] as number;
    if (a !== n) return a < n;
  }
  return false; // s == n
}

/** Throws `INVALID_SCALAR` unless 0 < s < n. */
export function assertValidScalar(s: Uint8Array, what: string): void {
  if (!isValidScalar(s)) throw new SilentPaymentError('INVALID_SCALAR', `${what} is not a valid scalar`);
}

/**
 * The public keys of a transaction's eligible inputs (33-byte compressed, in input order), or
 * null when the transaction is not to be scanned: no input, a SegWit v2+ output spent, or no
 * eligible input (BIP-352 "Inputs For Shared Secret Derivation").
 */
export function eligibleInputKeys(inputs: readonly ScanInput[]): Uint8Array[] | null {
  if (inputs.length === 0 || spendsUnknownSegwit(inputs)) return null;
  const keys: Uint8Array[] = [];
  for (const input of inputs) {
    const key = extractInputPublicKey(input);
    if (key !== null) keys.push(key);
  }
  return keys.length === 0 ? null : keys;
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
export function computeInputData<P>(backend: Secp256k1Backend<P>, inputs: readonly ScanInput[]): InputData<P> | null {
  const keys = eligibleInputKeys(inputs);
  if (keys === null) return null;
  // keys that are not curve points are skipped (the input is not eligible); infinity: skip the tx
  const sum = backend.sumCompressed(keys);
  if (sum === null) return null;
  const inputHash = taggedHash('BIP0352/Inputs', smallestOutpoint(inputs), backend.toCompressed(sum));
  assertValidScalar(inputHash, 'input_hash');
  return { sum, inputHash };
}

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
