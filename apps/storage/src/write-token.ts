import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '@repo/errors';

/** Bytes of randomness in a write token (answered as 64 hex characters). */
export const WRITE_TOKEN_BYTES = 32;

const TOKEN_RE = /^[0-9a-fA-F]{64}$/;
const BEARER_RE = /^Bearer +(\S+) *$/i;

/** A fresh write token (hex, for the client) and its hash (for the backend). */
export interface WriteToken {
  token: string;
  hash: Buffer;
}

/**
 * The SHA-256 of a token's 32 bytes. A token has 256 bits of entropy, so a plain hash is
 * enough: a stolen database gives nothing that can be turned back into a token
 * (docs/storage.md, "Write tokens").
 */
export function hashWriteToken(tokenHex: string): Buffer {
  return createHash('sha256').update(Buffer.from(tokenHex, 'hex')).digest();
}

/** 32 random bytes from the operating system's CSPRNG, and their hash. */
export function createWriteToken(): WriteToken {
  const token = randomBytes(WRITE_TOKEN_BYTES).toString('hex');
  return { token, hash: hashWriteToken(token) };
}

/** Whether two token hashes are equal, in time that does not depend on where they differ. */
export function tokenHashesMatch(stored: Buffer, offered: Buffer): boolean {
  return stored.length === offered.length && timingSafeEqual(stored, offered);
}

function unauthorized(message: string, error?: string): AppError {
  // RFC 6750, section 3: a 401 names the scheme (and the error, when a token was sent).
  const challenge = error === undefined ? 'Bearer realm="storage"' : `Bearer realm="storage", error="${error}"`;
  return new AppError('UNAUTHORIZED', { message, headers: { 'WWW-Authenticate': challenge } });
}

/**
 * Reads the write token from `Authorization: Bearer <64 hex>` (RFC 6750, section 2.1) and
 * returns its hash. Throws AppError UNAUTHORIZED (401, with `WWW-Authenticate`) when the header
 * is missing, uses another scheme, or holds something that is not a token.
 */
export function parseAuthorization(header: string | undefined): Buffer {
  if (header === undefined || header.trim() === '') {
    throw unauthorized('write token required: send the write_token of the store answer as "Authorization: Bearer <write_token>"');
  }
  const match = BEARER_RE.exec(header);
  if (match === null) throw unauthorized('write token required: the Authorization header must be "Bearer <write_token>"');
  const token = match[1]!;
  if (!TOKEN_RE.test(token)) {
    throw unauthorized(`malformed write token: it must be 64 hex characters, got length=${token.length}`, 'invalid_token');
  }
  return hashWriteToken(token);
}
