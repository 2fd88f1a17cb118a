/**
 * Everything but the `node:crypto` backend: for runtimes without `node:crypto`, where the
 * envelope runs on @noble/ciphers and randomness comes from Web Crypto.
 */
export { FILE_VERSION_RE, KEY_LENGTH, NONCE_LENGTH, TAG_LENGTH } from './constants';
export type { AeadBackend } from './cipher';
export { nobleBackend } from './noble-backend';
export { seal, open, sealToBase64, openFromBase64, randomNonce, type SealOptions } from './envelope';
export { parseKey, generateKey, deriveKey, keyFingerprint, sha256Hex, normalizeSha256Fingerprint } from './keys';
export { assertBytes, hexToBytes, bytesToHex, base64ToBytes, bytesToBase64, equalBytes, equalStrings, concatBytes } from './bytes';
export { X25519_KEY_LENGTH, nobleX25519, type X25519Backend } from './x25519';
export { HPKE_KEM_IDS, createHpkeKem, createDhkemX25519, createXWing, type HpkeKem, type HpkeKemName, type HpkeKeyPair } from './hpke-kem';
export {
  createHpkeSuite,
  HPKE_KDF_HKDF_SHA256,
  HPKE_AEAD_CHACHA20POLY1305,
  type HpkeSuite,
  type HpkeSuiteOptions,
  type HpkeSealOptions,
  type HpkeOpenOptions,
  type HpkeKeySchedule,
} from './hpke';
