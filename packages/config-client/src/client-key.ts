import {
  base64ToBytes,
  bytesToBase64,
  createHpkeSuite,
  nobleBackend,
  nobleX25519,
  nodeBackend,
  nodeX25519,
  type HpkeKemName,
  type HpkeSuite,
} from '@repo/crypto';
import { CLIENT_ERROR_CODES, ConfigClientError } from './errors';

/** A client's own key pair for the recipient mode. */
export interface ClientKeyPair {
  kem: HpkeKemName;
  /** X25519: the 32-byte scalar; X-Wing: the 32-byte seed (draft section 5.2). */
  privateKey: Uint8Array;
  /** X25519: 32 bytes; X-Wing: 1216 bytes. What the operator registers on the server. */
  publicKey: Uint8Array;
}

const KEM_NAMES: Readonly<Record<string, HpkeKemName>> = { x25519: 'X25519', xwing: 'X-Wing', 'x-wing': 'X-Wing' };

/** Parses a KEM name (`x25519`, `xwing`, `X-Wing`, any case); throws INVALID_ARGUMENT otherwise. */
export function parseKemName(text: string): HpkeKemName {
  const kem = KEM_NAMES[text.trim().toLowerCase()];
  if (kem === undefined)
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, `unknown KEM "${text}": expected x25519 or xwing`);
  return kem;
}

/** The HPKE suite of `kem`: X25519 on node:crypto (`node`) or @noble/curves (`noble`). */
export function clientSuite(kem: HpkeKemName, backend: 'node' | 'noble' = 'node'): HpkeSuite {
  return backend === 'noble'
    ? createHpkeSuite(kem, { x25519: nobleX25519, aead: nobleBackend })
    : createHpkeSuite(kem, { x25519: nodeX25519, aead: nodeBackend });
}

/** Generates a fresh key pair for `kem` from the platform's CSPRNG. */
export function generateClientKey(kem: HpkeKemName): ClientKeyPair {
  const { privateKey, publicKey } = clientSuite(kem).generateKeyPair();
  return { kem, privateKey, publicKey };
}

/**
 * The private key file: a comment line, then `<KEM> <private key in base64>`. Write it with
 * mode 0600; the public key is derived from it when it is read.
 */
export function formatClientPrivateKey(key: ClientKeyPair): string {
  return `# config-client private key (${key.kem}); keep it secret\n${key.kem} ${bytesToBase64(key.privateKey)}\n`;
}

/** The public key as the server takes it: standard base64, one line (`X-Client-Public-Key`, `<name>.pub`). */
export function formatClientPublicKey(key: Pick<ClientKeyPair, 'publicKey'>): string {
  return bytesToBase64(key.publicKey);
}

/**
 * Reads a private key file written by {@link formatClientPrivateKey}; throws INVALID_ARGUMENT
 * saying what is wrong (never echoing the key).
 */
export function parseClientPrivateKey(text: string): ClientKeyPair {
  const line = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
  const [kemText, keyText, extra] = (line ?? '').split(/\s+/);
  if (kemText === undefined || keyText === undefined || extra !== undefined) {
    throw new ConfigClientError(
      CLIENT_ERROR_CODES.INVALID_ARGUMENT,
      'private key file: expected a line "<X25519|X-Wing> <base64 private key>"',
    );
  }
  const kem = parseKemName(kemText);
  let privateKey: Uint8Array;
  try {
    privateKey = base64ToBytes(keyText, 'private key');
  } catch (cause) {
    throw new ConfigClientError(CLIENT_ERROR_CODES.INVALID_ARGUMENT, 'private key file: the key is not standard base64', { cause });
  }
  if (privateKey.length !== 32) {
    throw new ConfigClientError(
      CLIENT_ERROR_CODES.INVALID_ARGUMENT,
      `private key file: ${kem} private keys are 32 bytes, got ${privateKey.length}`,
    );
  }
  return { kem, privateKey, publicKey: clientSuite(kem).kem.publicKeyOf(privateKey) };
}
