import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { assertBytes } from './bytes';
import { invalidX25519Key, X25519_KEY_LENGTH, type X25519Backend } from './x25519';

// A raw private key enters OpenSSL as PKCS#8 DER: a fixed 16-byte header (RFC 8410, section 7)
// and the 32-byte scalar. Node 22 and later reject a JWK whose `x` does not match `d`, and the
// public half is what we would be computing.
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

function privateKey(scalar: Uint8Array): KeyObject {
  const der = Buffer.concat([PKCS8_X25519_PREFIX, scalar]);
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0);
  }
}

// Servers seal to the same few registered keys over and over: their imported form is kept.
const PUBLIC_CACHE_SIZE = 256;
const publicCache = new Map<string, KeyObject>();

function publicKey(u: Uint8Array): KeyObject {
  const x = toBase64Url(u);
  let key = publicCache.get(x);
  if (key === undefined) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' });
    if (publicCache.size >= PUBLIC_CACHE_SIZE) publicCache.delete(publicCache.keys().next().value!);
    publicCache.set(x, key);
  }
  return key;
}

// X25519(k, 9) as a Diffie-Hellman with the base point: cheaper than exporting the public half.
const BASE_POINT = createPublicKey({
  key: { kty: 'OKP', crv: 'X25519', x: toBase64Url(Uint8Array.of(9, ...new Uint8Array(31))) },
  format: 'jwk',
});

function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * X25519 on OpenSSL through `node:crypto`, about 15 times the pure-JS speed. OpenSSL clamps the
 * scalar, masks the top bit of `u` and reduces it modulo p exactly as RFC 7748 says, and fails on
 * an all-zero result; the RFC 7748, RFC 9180 and X-Wing vectors check it against @noble/curves.
 */
export const nodeX25519: X25519Backend = {
  name: 'node',
  scalarMult(scalar, u) {
    assertBytes(scalar, 'scalar', X25519_KEY_LENGTH);
    assertBytes(u, 'u', X25519_KEY_LENGTH);
    try {
      return new Uint8Array(diffieHellman({ privateKey: privateKey(scalar), publicKey: publicKey(u) }));
    } catch {
      throw invalidX25519Key();
    }
  },
  scalarMultBase(scalar) {
    assertBytes(scalar, 'scalar', X25519_KEY_LENGTH);
    return new Uint8Array(diffieHellman({ privateKey: privateKey(scalar), publicKey: BASE_POINT }));
  },
};
