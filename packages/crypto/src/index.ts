export { KEY_LENGTH, NONCE_LENGTH, TAG_LENGTH } from './constants';
export type { AeadBackend } from './cipher';
export { nodeBackend } from './node-backend';
export { nobleBackend } from './noble-backend';
export { seal, open, sealToBase64, openFromBase64, type SealOptions } from './envelope';
export { parseKey, generateKey, deriveKey, keyFingerprint, sha256Hex } from './keys';
export { assertBytes, hexToBytes, bytesToHex, base64ToBytes, bytesToBase64, equalBytes, equalStrings, concatBytes } from './bytes';
