import { randomBytes } from '@noble/ciphers/utils.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { assertBytes, bytesToHex, hexToBytes } from './bytes';
import { KEY_LENGTH } from './constants';

const KEY_HEX_RE = /^[0-9a-fA-F]{64}$/;

/**
 * Parses a 32-byte key written as 64 hex characters (surrounding white space allowed, as in a
 * key file). Throws a TypeError naming `name` otherwise; the message never contains the value.
 */
export function parseKey(text: string, name = 'key'): Uint8Array {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  if (!KEY_HEX_RE.test(trimmed)) {
    throw new TypeError(`"${name}" expected ${KEY_LENGTH * 2} hex characters, got length=${trimmed.length}`);
  }
  return hexToBytes(trimmed, name);
}

/** Returns 32 fresh random bytes from the platform's CSPRNG (Web Crypto getRandomValues). */
export function generateKey(): Uint8Array {
  return randomBytes(KEY_LENGTH);
}

/**
 * HKDF-SHA256 (RFC 5869) of `ikm` with `info`, `length` bytes (default 32). Used to derive one
 * key per environment from the master key, with the environment's name in `info`.
 */
export function deriveKey(ikm: Uint8Array, info: string, options: { salt?: Uint8Array; length?: number } = {}): Uint8Array {
  assertBytes(ikm, 'ikm');
  return hkdf(sha256, ikm, options.salt, new TextEncoder().encode(info), options.length ?? KEY_LENGTH);
}

/**
 * A short, public name for a secret: the first 16 hex characters of SHA-256 over a domain tag
 * and the key. Safe to log; cannot be turned back into the key.
 */
export function keyFingerprint(key: Uint8Array): string {
  assertBytes(key, 'key');
  const tagged = new Uint8Array(key.length + 15);
  tagged.set(new TextEncoder().encode('key-fingerprint'), 0);
  tagged.set(key, 15);
  return bytesToHex(sha256(tagged)).slice(0, 16);
}

/** SHA-256 of `data` as lower-case hex. */
export function sha256Hex(data: Uint8Array): string {
  return bytesToHex(sha256(data));
}

/**
 * Normalises a SHA-256 certificate fingerprint to the `AB:CD:…` form that Node's
 * `getPeerCertificate().fingerprint256` and `openssl x509 -fingerprint -sha256` print. Accepts
 * plain hex or colons, any case, surrounding white space; returns undefined for anything else.
 */
export function normalizeSha256Fingerprint(text: string): string | undefined {
  const hex = text.replace(/:/g, '').trim().toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) return undefined;
  return hex.match(/../g)!.join(':');
}
