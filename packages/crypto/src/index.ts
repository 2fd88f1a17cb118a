// The portable API, plus the two implementations that run on `node:crypto` (OpenSSL).
export * from './portable';
export { nodeBackend } from './node-backend';
export { nodeX25519 } from './x25519-node';
