import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { TAG_INPUTS, TAG_LABEL, TAG_SHARED_SECRET } from './constants';

type Sha256Hasher = ReturnType<typeof sha256.create>;

/** A hasher already fed with SHA256(tag) || SHA256(tag) (BIP-340 tagged hash), cloned per use. */
function prefixedHasher(tag: string): Sha256Hasher {
  const tagHash = sha256(new TextEncoder().encode(tag));
  return sha256.create().update(tagHash).update(tagHash);
}

const HASHERS = {
  [TAG_INPUTS]: prefixedHasher(TAG_INPUTS),
  [TAG_SHARED_SECRET]: prefixedHasher(TAG_SHARED_SECRET),
  [TAG_LABEL]: prefixedHasher(TAG_LABEL),
} as const;

export type Bip352Tag = keyof typeof HASHERS;

/** hash_tag(parts…) for the three BIP-352 tags; the 64-byte tag prefix is hashed once per process. */
export function taggedHash(tag: Bip352Tag, ...parts: Uint8Array[]): Uint8Array {
  const h = HASHERS[tag].clone();
  for (const part of parts) h.update(part);
  return h.digest();
}

/** RIPEMD160(SHA256(x)), the key hash of P2PKH and P2WPKH. */
export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}
