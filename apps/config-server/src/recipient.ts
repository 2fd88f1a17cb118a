import type { IncomingHttpHeaders } from 'node:http';
import { base64ToBytes, createHpkeSuite, nodeBackend, nodeX25519, type HpkeKemName, type HpkeSuite } from '@repo/crypto';
import { AppError } from '@repo/errors';
import { CLIENT_KEY_LENGTHS } from './client-keys';

/** Request header carrying the client's public key, standard base64 (RFC 4648 section 4). */
export const CLIENT_PUBLIC_KEY_HEADER = 'x-client-public-key';
/** Request header naming the KEM of that key: `X25519` or `X-Wing`. */
export const CLIENT_KEM_HEADER = 'x-client-kem';

/** `X-Encryption-Mode` of each way of sealing (docs/config-server.md, "Recipient mode"). */
export const ENCRYPTION_MODES = { psk: 'psk', X25519: 'hpke-x25519', 'X-Wing': 'hpke-xwing' } as const;

/** The HPKE `info` of a file: binds the sealed body to the environment and path it was asked for. */
export function recipientInfo(env: string, file: string): Uint8Array {
  return new TextEncoder().encode(`config-server/v1/file/${env}/${file}`);
}

/** What a request in recipient mode asks for. */
export interface RecipientRequest {
  kem: HpkeKemName;
  publicKey: Uint8Array;
}

const KEM_NAMES: Readonly<Record<string, HpkeKemName>> = { x25519: 'X25519', 'x-wing': 'X-Wing', xwing: 'X-Wing' };

/**
 * Reads the recipient-mode headers. Returns undefined when neither is present (pre-shared-key
 * mode); throws a 400 AppError saying which header is missing or wrong otherwise. The messages
 * are about the headers only, never about the file.
 */
export function parseRecipientHeaders(headers: IncomingHttpHeaders): RecipientRequest | undefined {
  const rawKey = headers[CLIENT_PUBLIC_KEY_HEADER];
  const rawKem = headers[CLIENT_KEM_HEADER];
  if (rawKey === undefined && rawKem === undefined) return undefined;
  if (typeof rawKem !== 'string' || rawKem.trim() === '') {
    throw new AppError('MISSING_PARAMETER', { message: 'missing header: X-Client-Kem', details: 'X25519 or X-Wing' });
  }
  if (typeof rawKey !== 'string' || rawKey.trim() === '') {
    throw new AppError('MISSING_PARAMETER', {
      message: 'missing header: X-Client-Public-Key',
      details: 'the public key in standard base64',
    });
  }
  const kem = KEM_NAMES[rawKem.trim().toLowerCase()];
  if (kem === undefined) {
    throw new AppError('INVALID_PARAMETER', { message: 'unknown KEM in X-Client-Kem', details: 'expected X25519 or X-Wing' });
  }
  let publicKey: Uint8Array;
  try {
    publicKey = base64ToBytes(rawKey.trim(), 'X-Client-Public-Key');
  } catch {
    throw new AppError('INVALID_PARAMETER', { message: 'malformed X-Client-Public-Key', details: 'expected standard base64' });
  }
  const expected = CLIENT_KEY_LENGTHS[kem];
  if (publicKey.length !== expected) {
    throw new AppError('INVALID_PARAMETER', {
      message: 'wrong key length in X-Client-Public-Key',
      details: `${kem} public keys are ${expected} bytes, got ${publicKey.length}`,
    });
  }
  return { kem, publicKey };
}

/** The suites the server seals with: X25519 on OpenSSL (node:crypto), ML-KEM-768 on @noble/post-quantum. */
export function createRecipientSuites(): Record<HpkeKemName, HpkeSuite> {
  return {
    X25519: createHpkeSuite('X25519', { x25519: nodeX25519, aead: nodeBackend }),
    'X-Wing': createHpkeSuite('X-Wing', { x25519: nodeX25519, aead: nodeBackend }),
  };
}
