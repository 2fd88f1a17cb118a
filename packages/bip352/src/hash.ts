import { createHash } from 'node:crypto';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { TAG_INPUTS, TAG_LABEL, TAG_SHARED_SECRET } from './constants';

/** SHA-256 round constants (FIPS 180-4 §4.2.2). */
const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
/** SHA-256 initial hash value (FIPS 180-4 §5.3.3). */
const IV = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Int32Array(64);

/** One SHA-256 compression of the 64 bytes of `block` at `offset` into `state` (FIPS 180-4 §6.2.2). */
function compress(state: Int32Array, block: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const j = offset + 4 * i;
    W[i] = ((block[j] as number) << 24) | ((block[j + 1] as number) << 16) | ((block[j + 2] as number) << 8) | (block[j + 3] as number);
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15] as number;
    const w2 = W[i - 2] as number;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = ((W[i - 16] as number) + s0 + (W[i - 7] as number) + s1) | 0;
  }
  let a = state[0] as number;
  let b = state[1] as number;
  let c = state[2] as number;
  let d = state[3] as number;
  let e = state[4] as number;
  let f = state[5] as number;
  let g = state[6] as number;
  let h = state[7] as number;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (W[i] as number)) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = ((state[0] as number) + a) | 0;
  state[1] = ((state[1] as number) + b) | 0;
  state[2] = ((state[2] as number) + c) | 0;
  state[3] = ((state[3] as number) + d) | 0;
  state[4] = ((state[4] as number) + e) | 0;
  state[5] = ((state[5] as number) + f) | 0;
  state[6] = ((state[6] as number) + g) | 0;
  state[7] = ((state[7] as number) + h) | 0;
}

/** The SHA-256 state after the block SHA256(tag) || SHA256(tag) (BIP-340 tagged hash prefix). */
function tagMidstate(tag: string): Int32Array {
  const tagHash = createHash('sha256').update(tag, 'utf8').digest();
  const block = new Uint8Array(64);
  block.set(tagHash, 0);
  block.set(tagHash, 32);
  const state = IV.slice();
  compress(state, block, 0);
  return state;
}

const MIDSTATES = {
  [TAG_INPUTS]: tagMidstate(TAG_INPUTS),
  [TAG_SHARED_SECRET]: tagMidstate(TAG_SHARED_SECRET),
  [TAG_LABEL]: tagMidstate(TAG_LABEL),
} as const;

export type Bip352Tag = keyof typeof MIDSTATES;

const SCRATCH = new Uint8Array(256);
const STATE = new Int32Array(8);

/**
 * hash_tag(parts…) = SHA256(SHA256(tag) || SHA256(tag) || parts…) for the three BIP-352 tags
 * (BIP-340 tagged hashes). The 64-byte tag prefix is one SHA-256 block, compressed once per
 * process; each call compresses only its own message (one block for the shared secret, two for
 * the inputs hash). Written out because the scan hashes twice per transaction and a midstate
 * copy through node:crypto (a native object per call) costs about three times as much;
 * `test/hash.test.ts` checks it against node:crypto.
 */
export function taggedHash(tag: Bip352Tag, ...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const padded = (length + 9 + 63) & ~63; // message, 0x80, 64-bit length, to a whole block
  const buffer = padded <= SCRATCH.length ? SCRATCH : new Uint8Array(padded);
  let offset = 0;
  for (const part of parts) {
    buffer.set(part, offset);
    offset += part.length;
  }
  buffer.fill(0, offset, padded);
  buffer[offset] = 0x80;
  const bits = (64 + length) * 8; // the prefix block counts; below 2^53
  const high = Math.floor(bits / 0x100000000);
  buffer[padded - 8] = high >>> 24;
  buffer[padded - 7] = high >>> 16;
  buffer[padded - 6] = high >>> 8;
  buffer[padded - 5] = high;
  buffer[padded - 4] = bits >>> 24;
  buffer[padded - 3] = bits >>> 16;
  buffer[padded - 2] = bits >>> 8;
  buffer[padded - 1] = bits;
  STATE.set(MIDSTATES[tag]);
  for (let block = 0; block < padded; block += 64) compress(STATE, buffer, block);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const v = STATE[i] as number;
    out[4 * i] = v >>> 24;
    out[4 * i + 1] = v >>> 16;
    out[4 * i + 2] = v >>> 8;
    out[4 * i + 3] = v;
  }
  return out;
}

/** RIPEMD160(SHA256(x)), the key hash of P2PKH and P2WPKH. */
export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}
