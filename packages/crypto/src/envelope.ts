import { randomBytes } from '@noble/ciphers/utils.js';
import type { AeadBackend } from './cipher';
import { assertBytes, base64ToBytes, bytesToBase64 } from './bytes';
import { NONCE_LENGTH, TAG_LENGTH } from './constants';

// Nonces come from a pool of CSPRNG bytes refilled 128 nonces at a time: one random call per
// 128 messages instead of one each (what Node's randomUUID cache does too). Every nonce is still
// 96 fresh random bits, never reused: the pool is consumed, not cycled.
const NONCE_POOL_SIZE = NONCE_LENGTH * 128;
let noncePool = new Uint8Array(0);
let noncePoolOffset = 0;

/** 12 fresh random bytes for a ChaCha20-Poly1305 nonce. */
export function randomNonce(): Uint8Array {
  if (noncePoolOffset + NONCE_LENGTH > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_SIZE);
    noncePoolOffset = 0;
  }
  const nonce = noncePool.slice(noncePoolOffset, noncePoolOffset + NONCE_LENGTH);
  noncePoolOffset += NONCE_LENGTH;
  return nonce;
}

/** Options of {@link seal}. */
export interface SealOptions {
  /** The ChaCha20-Poly1305 implementation. */
  backend: AeadBackend;
  /** A fixed nonce, for test vectors only; by default 12 fresh random bytes. */
  nonce?: Uint8Array;
}

/**
 * Seals `plaintext` into the envelope of docs/config-server.md, "Encryption format": `nonce(12) || ciphertext || tag(16)`,
 * no associated data, so any ChaCha20-Poly1305 implementation holding the key opens it.
 */
export function seal(key: Uint8Array, plaintext: Uint8Array, options: SealOptions): Uint8Array {
  const nonce = options.nonce ?? randomNonce();
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
