import { SilentPaymentError } from './errors';

/** Names of the available secp256k1 implementations. */
export type BackendName = 'native' | 'wasm' | 'noble';

/** The backend used when none is named: the native libsecp256k1 binding (the fast path). */
export const DEFAULT_BACKEND: BackendName = 'native';

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
}

/** A backend whose point type is not known to the caller. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySecp256k1Backend = Secp256k1Backend<any>;

const cache = new Map<BackendName, AnySecp256k1Backend>();

/**
 * Loads a secp256k1 backend: `native` (the `secp256k1` N-API binding of libsecp256k1 and
 * this package's whole-transaction scanner addon, the default and the fastest), `wasm` (`tiny-secp256k1`, libsecp256k1 compiled to WebAssembly) or
 * `noble` (`@noble/curves`, pure JavaScript, the reference). A requested backend that cannot be
 * loaded is an error: there is never a silent fall back to a slower implementation.
 * @throws {SilentPaymentError} `BACKEND_UNAVAILABLE` naming the backend and the reason.
 * @throws {RangeError} for an unknown name.
 */
export function loadSecp256k1Backend(name: BackendName = DEFAULT_BACKEND): AnySecp256k1Backend {
  const cached = cache.get(name);
  if (cached) return cached;
  let backend: AnySecp256k1Backend;
  try {
    switch (name) {
      case 'native':
        backend = (require('./backends/native') as typeof import('./backends/native')).createNativeBackend();
        break;
      case 'wasm':
        backend = (require('./backends/wasm') as typeof import('./backends/wasm')).createWasmBackend();
        break;
      case 'noble':
        backend = (require('./backends/noble') as typeof import('./backends/noble')).createNobleBackend();
        break;
      default:
        throw new RangeError(`"name" expected 'native', 'wasm' or 'noble', got ${String(name)}`);
    }
  } catch (error) {
    if (error instanceof RangeError) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SilentPaymentError(
      'BACKEND_UNAVAILABLE',
      `secp256k1 backend '${name}' cannot be loaded (${reason}); install it (for 'native': the npm package ` +
        `secp256k1 with its prebuilt or compiled addon, and this package's scanner addon, compiled by its ` +
        `\`npm run build\` with node-gyp) or choose another backend explicitly`,
      { cause: error },
    );
  }
  cache.set(name, backend);
  return backend;
}

/** Whether a backend loads here (for tools that list what they can measure). */
export function isBackendAvailable(name: BackendName): boolean {
  try {
    loadSecp256k1Backend(name);
    return true;
  } catch {
    return false;
  }
}
