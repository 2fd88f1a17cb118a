/** Sizes of the envelope (docs/config-server.md, "Encryption format"; RFC 8439). */
export const KEY_LENGTH = 32;
/** ChaCha20-Poly1305 nonce: 96 bits, random per message. */
export const NONCE_LENGTH = 12;
/** Poly1305 tag, appended to the ciphertext. */
export const TAG_LENGTH = 16;
/**
 * A config file's version, as the server names it and a client pins it (docs/config-server.md,
 * "Versions"): 128 bits of HMAC-SHA256 in unpadded base64url (RFC 4648 section 5), 22 characters.
 */
export const FILE_VERSION_RE = /^[A-Za-z0-9_-]{22}$/;
