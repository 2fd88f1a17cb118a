import { x25519 } from '@noble/curves/ed25519.js';
import { assertBytes } from './bytes';

/** Sizes of RFC 7748 X25519: scalars and u-coordinates are 32 bytes. */
export const X25519_KEY_LENGTH = 32;

/**
 * One implementation of the X25519 function (RFC 7748, section 5). Scalars are clamped and the
 * top bit of `u` is masked by the function itself. Both implementations refuse an all-zero output
 * (a low-order `u`), which RFC 9180 section 7.1.4 requires of DHKEM; they throw
 * Error('invalid X25519 key') then, whatever the cause, so both fail the same way.
 */
export interface X25519Backend {
  /** Name for logs and benchmarks. */
  readonly name: 'node' | 'noble';
  /** X25519(scalar, u): the shared u-coordinate. */
  scalarMult(scalar: Uint8Array, u: Uint8Array): Uint8Array;
  /** X25519(scalar, 9): the public key of `scalar`. */
  scalarMultBase(scalar: Uint8Array): Uint8Array;
}

/** Throws the one error of {@link X25519Backend}. */
export function invalidX25519Key(): Error {
  return new Error('invalid X25519 key');
}

/** The portable X25519: @noble/curves, pure JavaScript. */
export const nobleX25519: X25519Backend = {
  name: 'noble',
  scalarMult(scalar, u) {
    assertBytes(scalar, 'scalar', X25519_KEY_LENGTH);
    assertBytes(u, 'u', X25519_KEY_LENGTH);
    try {
      return x25519.getSharedSecret(scalar, u);
    } catch {
      throw invalidX25519Key();
    }
  },
  scalarMultBase(scalar) {
    assertBytes(scalar, 'scalar', X25519_KEY_LENGTH);
    return x25519.getPublicKey(scalar);
  },
};
