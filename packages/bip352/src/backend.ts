/**
 * The secp256k1 backend interface: what the protocol code needs of an implementation. The
 * implementations (`backends/`) import it; the loader that picks one is `load-backend.ts`.
 */
import type { SilentPaymentError } from './errors';

/** Names of the available secp256k1 implementations. */
export type BackendName = 'native' | 'wasm' | 'noble';

/** Every BackendName, in the order the docs list them. */
export const BACKEND_NAMES: readonly BackendName[] = ['native', 'wasm', 'noble'];

/** Whether `name` names a backend (a setting read as text, before loadSecp256k1Backend). */
export function isBackendName(name: string): name is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(name);
}

/**
 * The elliptic-curve operations BIP-352 needs, behind one interface so the protocol code is
 * written once. `P` is the backend's own point handle (an uncompressed SEC1 buffer for the
 * libsecp256k1 backends, a projective point for noble): points stay in that form between calls,
 * so inner loops never encode or decode keys. Scalars are 32-byte big-endian arrays, already
 * checked to be valid (0 < s < n) by the caller.
 */
export interface Secp256k1Backend<P = unknown> {
  readonly name: BackendName;
  /** A point from 33-byte compressed SEC1 bytes; null when the bytes are not a curve point. */
  pointFromCompressed(bytes: Uint8Array): P | null;
  /** The point with even y and this 32-byte x (BIP-340 lift_x); null when x is not on the curve. */
  liftX(x: Uint8Array): P | null;
  /** a + b; null for the point at infinity. */
  add(a: P, b: P): P | null;
  /** The sum of the points; null for the point at infinity. */
  sum(points: P[]): P | null;
  /**
   * The sum of 33-byte compressed keys, skipping any that is not a curve point; null when none is
   * valid or the sum is infinity. One call for the common case, which the native backend does in
   * one libsecp256k1 call.
   */
  sumCompressed(keys: Uint8Array[]): P | null;
  /** -a. */
  negate(a: P): P;
  /** s·p, one variable-base multiplication. */
  mul(p: P, scalar: Uint8Array): P;
  /** p + t·G; null for the point at infinity. */
  addTweak(p: P, tweak: Uint8Array): P | null;
  /** s·G. */
  baseMul(scalar: Uint8Array): P;
  /** 33-byte compressed SEC1 encoding (ser_P). */
  toCompressed(p: P): Uint8Array;
  /** The 32-byte affine x coordinate. */
  toXOnly(p: P): Uint8Array;
  /** The top 48 bits of the affine x coordinate: a Map key that needs no encoding. */
  xKey(p: P): number;
  /** Whether p's affine x equals the 32 bytes of `x` at `offset`. */
  xEquals(p: P, x: Uint8Array, offset?: number): boolean;
  /** Point equality. */
  equals(a: P, b: P): boolean;
  /** (a·b) mod n. */
  scalarMul(a: Uint8Array, b: Uint8Array): Uint8Array;
  /** (a + b) mod n; may be zero. */
  scalarAdd(a: Uint8Array, b: Uint8Array): Uint8Array;
  /** (n - a) mod n. */
  scalarNegate(a: Uint8Array): Uint8Array;
  /** A whole-transaction scanner for (b_scan, B_spend), where the backend has one (native). */
  createTransactionScanner?(scanKey: Uint8Array, spend: P): TransactionScanner<P>;
  /**
   * The tweaks (input_hash·A, 33 bytes compressed) of many transactions in one call, where the
   * backend has it (native): for each job its tweak, or null when it has none (no valid key, A at
   * infinity, input_hash not a valid scalar). `xs` is not read.
   */
  tweaks?(jobs: readonly Omit<TransactionScanJob, 'xs'>[]): Array<Uint8Array | null>;
  /** {@link computeTweaksOfPacked}'s records, the inputs read in C, where the backend has it (native). */
  tweaksPacked?(jobs: Uint8Array): Uint8Array;
}

/** One output found by {@link TransactionScanner.scan}. */
export interface TransactionMatch {
  /** position of the output among the x-only keys passed. */
  position: number;
  k: number;
  /** the slot given to {@link TransactionScanner.addSpendKey} for its label, or -1 for none. */
  labelSlot: number;
  /** t_k, 32 bytes. */
  tk: Uint8Array;
}

/**
 * A whole transaction's scan in one call (BIP-352 "Scanning" after input eligibility), for a
 * backend that can do it without returning to JavaScript between the steps: the native one.
 */
export interface TransactionScanner<P = unknown> {
  /** Adds B_m = B_spend + L_m for a label, under `slot`; null when B_m is the point at infinity. */
  addSpendKey(point: P | null, slot: number): void;
  /**
   * Scans: `keys` the eligible input keys (33-byte compressed, concatenated; invalid ones are
   * skipped), `outpoint` the smallest outpoint (36 bytes), `xs` the x-only taproot output keys
   * (32 bytes each). null when the transaction is not to be scanned (no valid key, or A at
   * infinity). `ecOnly` replaces each hash by a constant (the benchmark's tight loop).
   * @throws {SilentPaymentError} `INVALID_SCALAR` when input_hash or a t_k is not a valid scalar.
   */
  scan(keys: Uint8Array, outpoint: Uint8Array, xs: Uint8Array, kMax: number, ecOnly?: boolean): TransactionMatch[] | null;
  /**
   * Scans several transactions in one call, each as {@link scan} would: its matches, null, or
   * the SilentPaymentError that scan would throw for it. The native scanner takes them eight at a
   * time, shares their inversions and, where the CPU has AVX-512 IFMA, multiplies and raises the
   * eight at once (native/README.md, "Scanning many transactions").
   */
  scanMany(txs: readonly TransactionScanJob[], kMax: number, ecOnly?: boolean): Array<TransactionMatch[] | null | SilentPaymentError>;
  /**
   * Scans packed transactions (src/packed.ts) as {@link scanMany} scans them, their inputs read
   * by the backend itself (input eligibility, keys, smallest outpoint, taproot outputs: the rules
   * of src/inputs.ts): no object per input. Only the transactions with something to say come
   * back: `offset` where the transaction starts in `jobs`, and its matches (`position` among its
   * taproot outputs, in packed order) or the SilentPaymentError scan would throw.
   * @throws {TypeError} when `jobs` is not whole packed transactions.
   */
  scanPacked?(jobs: Uint8Array, kMax: number, ecOnly?: boolean): PackedMatches[];
  /**
   * Scans rows of a tweak index as {@link scanMany} scans transactions: each row's `tweak` is
   * input_hash·A (33 bytes compressed), so the ECDH point is b_scan·tweak; `xs` its taproot output
   * keys. null for a row whose tweak is not a curve point.
   */
  scanTweaks(rows: readonly TweakScanJob[], kMax: number): Array<TransactionMatch[] | null | SilentPaymentError>;
}

/** One row for {@link TransactionScanner.scanTweaks}. */
export interface TweakScanJob {
  /** input_hash·A, 33 bytes compressed. */
  tweak: Uint8Array;
  /** the x-only taproot output keys, 32 bytes each, concatenated. */
  xs: Uint8Array;
}

/** A transaction of {@link TransactionScanner.scanPacked}'s answer. */
export interface PackedMatches {
  offset: number;
  answer: TransactionMatch[] | SilentPaymentError;
}

/** One transaction for {@link TransactionScanner.scanMany}: the arguments of {@link TransactionScanner.scan}. */
export interface TransactionScanJob {
  keys: Uint8Array;
  outpoint: Uint8Array;
  xs: Uint8Array;
}

/** A backend whose point type is not known to the caller. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the loader cannot know a backend's point type; each caller gets it back through Secp256k1Backend<P>
export type AnySecp256k1Backend = Secp256k1Backend<any>;
