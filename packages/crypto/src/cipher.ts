/**
 * A ChaCha20-Poly1305 implementation (RFC 8439): `encrypt` returns `ciphertext || tag`,
 * `decrypt` takes it back and throws `invalid tag` on any forgery. The config envelope uses no
 * associated data; `aad` exists for the RFC vectors and HPKE.
 */
export interface AeadBackend {
  /** Name for logs and benchmarks. */
  readonly name: 'node' | 'noble';
  /** Encrypts `plaintext` under `key` and `nonce`; returns ciphertext followed by the 16-byte tag. */
  encrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** Opens `ciphertext || tag`; throws Error('invalid tag') when it does not authenticate. */
  decrypt(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** `nonce || ciphertext || tag` in one buffer, with as few copies as the implementation allows. */
  sealEnvelope(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Uint8Array;
}
