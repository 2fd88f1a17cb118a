/**
 * Stable error codes of this package (one table, as `ws` documents its codes). Programmer errors
 * (wrong argument types or lengths) stay `TypeError`/`RangeError`.
 */
export const SILENT_PAYMENT_ERROR_CODES = [
  /** The address is not a valid silent payment address (checksum, hrp, version, length, keys). */
  'INVALID_ADDRESS',
  /** Sending: no input of the "Inputs For Shared Secret Derivation" list. */
  'NO_ELIGIBLE_INPUTS',
  /** Sending: an input spends a SegWit version 2+ output, which a v0 sender must exclude. */
  'UNSUPPORTED_INPUT',
  /** Sending: the sum of the input private keys is 0 (BIP-352: fail). */
  'INPUT_KEYS_SUM_ZERO',
  /** Sending: an input's private key does not belong to the public key the receiver will see. */
  'PRIVATE_KEY_MISMATCH',
  /** Sending: a B_scan group holds more than K_max addresses (BIP-352 v1.1: fail). */
  'K_MAX_EXCEEDED',
  /** A tagged hash is not a valid scalar (probability ~2^-128; BIP-352: fail). */
  'INVALID_SCALAR',
  /** The requested secp256k1 backend cannot be loaded. */
  'BACKEND_UNAVAILABLE',
] as const;

export type SilentPaymentErrorCode = (typeof SILENT_PAYMENT_ERROR_CODES)[number];

/** The one error class of this package: a stable `code`, a message, and the original `cause`. */
export class SilentPaymentError extends Error {
  readonly code: SilentPaymentErrorCode;

  constructor(code: SilentPaymentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SilentPaymentError';
    this.code = code;
  }
}
