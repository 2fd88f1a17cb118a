import { randomBytes } from '@noble/ciphers/utils.js';
import type { AeadBackend } from './cipher';
import { assertBytes, base64ToBytes, bytesToBase64 } from './bytes';
import { NONCE_LENGTH, TAG_LENGTH } from './constants';

/** Options of {@link seal}. */
export interface SealOptions {
  /** The ChaCha20-Poly1305 implementation. */
  backend: AeadBackend;
  /** A fixed nonce, for test vectors only; by default 12 fresh random bytes. */
  nonce?: Uint8Array;
}

/**
 * Seals `plaintext` into the envelope of spec 000: `nonce(12) || ciphertext || tag(16)`,
 * no associated data, so any ChaCha20-Poly1305 implementation holding the key opens it.
 */
export function seal(key: Uint8Array, plaintext: Uint8Array, options: SealOptions): Uint8Array {
  const nonce = options.nonce ?? randomBytes(NONCE_LENGTH);
  assertBytes(nonce, 'nonce', NONCE_LENGTH);
  return options.backend.sealEnvelope(key, nonce, plaintext);
}

/** Opens an envelope made by {@link seal}; throws Error('invalid tag') when it was altered. */
export function open(key: Uint8Array, envelope: Uint8Array, options: { backend: AeadBackend }): Uint8Array {
  assertBytes(envelope, 'envelope');
  if (envelope.length < NONCE_LENGTH + TAG_LENGTH) throw new Error('invalid tag');
  return options.backend.decrypt(key, envelope.subarray(0, NONCE_LENGTH), envelope.subarray(NONCE_LENGTH));
}

/** {@link seal}, then standard base64: the body the config server answers. */
export function sealToBase64(key: Uint8Array, plaintext: Uint8Array, options: SealOptions): string {
  return bytesToBase64(seal(key, plaintext, options));
}

/** Decodes base64 and {@link open}s; throws a TypeError for bad base64, Error('invalid tag') for a forgery. */
export function openFromBase64(key: Uint8Array, text: string, options: { backend: AeadBackend }): Uint8Array {
  return open(key, base64ToBytes(text, 'envelope'), options);
}
