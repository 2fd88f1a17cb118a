import { createHash, type Hash } from 'node:crypto';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { TAG_INPUTS, TAG_LABEL, TAG_SHARED_SECRET } from './constants';

/**
 * A SHA-256 state already fed with SHA256(tag) || SHA256(tag) (BIP-340 tagged hash), copied per
 * use. node:crypto is used for speed: it is about twice as fast as a JavaScript SHA-256 for
 * these short messages, and hashing is on the scanner's per-transaction path.
 */
function prefixedHasher(tag: string): Hash {
  const tagHash = createHash('sha256').update(tag, 'utf8').digest();
  return createHash('sha256').update(tagHash).update(tagHash);
}

const HASHERS = {
  [TAG_INPUTS]: prefixedHasher(TAG_INPUTS),
  [TAG_SHARED_SECRET]: prefixedHasher(TAG_SHARED_SECRET),
  [TAG_LABEL]: prefixedHasher(TAG_LABEL),
} as const;

export type Bip352Tag = keyof typeof HASHERS;

/** hash_tag(parts…) for the three BIP-352 tags; the 64-byte tag prefix is hashed once per process. */
export function taggedHash(tag: Bip352Tag, ...parts: Uint8Array[]): Uint8Array {
  const h = HASHERS[tag].copy();
  for (const part of parts) h.update(part);
  const digest = h.digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, 32);
}

/** RIPEMD160(SHA256(x)), the key hash of P2PKH and P2WPKH. */
export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}
