/** Sizes of the envelope (docs/config-server.md, "Encryption format"; RFC 8439). */
export const KEY_LENGTH = 32;
/** ChaCha20-Poly1305 nonce: 96 bits, random per message. */
export const NONCE_LENGTH = 12;
/** Poly1305 tag, appended to the ciphertext. */
export const TAG_LENGTH = 16;
