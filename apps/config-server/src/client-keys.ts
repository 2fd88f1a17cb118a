import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  base64ToBytes,
  bytesToHex,
  createHpkeSuite,
  hexToBytes,
  nodeBackend,
  nodeX25519,
  sha256Hex,
  type HpkeKemName,
  type HpkeSuite,
} from '@repo/crypto';
import type { Logger } from '@repo/service';

/** A client public key registered for an environment. */
export interface RegisteredClientKey {
  /** The file name without `.pub`: who the operator registered. */
  name: string;
  kem: HpkeKemName;
  publicKey: Uint8Array;
  /** First 16 hex characters of SHA-256 of the public key, for logs. */
  fingerprint: string;
}

/**
 * The public keys the recipient mode may seal to, per environment: the files
 * `<dir>/<env>/<name>.pub`, each holding one public key in base64 or hex (lines starting with
 * `#` are comments). The KEM follows from the length: 32 bytes is X25519, 1216 bytes X-Wing.
 */
export interface ClientKeyRegistry {
  /** The registration of `publicKey` for `env` under `kem`, or undefined when it is not registered. */
  find(env: string, kem: HpkeKemName, publicKey: Uint8Array): RegisteredClientKey | undefined;
}

/** Options of {@link createClientKeyRegistry}. */
export interface ClientKeyRegistryOptions {
  dir: string;
  logger: Logger;
  /** How long a listing is trusted before the folder is looked at again (ms, default 1000). */
  recheckMs?: number;
  now?: () => number;
}

const KEM_BY_LENGTH = new Map<number, HpkeKemName>([
  [32, 'X25519'],
  [1216, 'X-Wing'],
]);

/** The listing stamp of an environment without a client key folder. */
const NO_FOLDER = 'none';
const NO_KEYS: ReadonlyMap<string, RegisteredClientKey> = new Map();

/** Public key length in bytes of each KEM. */
export const CLIENT_KEY_LENGTHS: Readonly<Record<HpkeKemName, number>> = { X25519: 32, 'X-Wing': 1216 };

/** Short public name of a public key, safe to log. */
export function clientKeyFingerprint(publicKey: Uint8Array): string {
  return sha256Hex(publicKey).slice(0, 16);
}

/**
 * Creates the registry. Each environment's folder is listed again at most every `recheckMs`;
 * when a `.pub` file appears, disappears or changes (name, size or mtime), the folder is read
 * again, so registering or revoking a key needs no restart. A file that does not hold a valid key
 * is skipped with a warning naming the file (never its content).
 */
export function createClientKeyRegistry(options: ClientKeyRegistryOptions): ClientKeyRegistry {
  const recheckMs = options.recheckMs ?? 1_000;
  const now = options.now ?? Date.now;
  const { logger } = options;
  const cache = new Map<string, { stamp: string; checkedAt: number; keys: Map<string, RegisteredClientKey> }>();
  // Used once per key at load: ML-KEM's encapsulation key check (FIPS 203 section 7.2) runs
  // there, so a registered X-Wing key the server cannot seal to is refused at once.
  const suites: Record<HpkeKemName, HpkeSuite> = {
    X25519: createHpkeSuite('X25519', { x25519: nodeX25519, aead: nodeBackend }),
    'X-Wing': createHpkeSuite('X-Wing', { x25519: nodeX25519, aead: nodeBackend }),
  };

  function listing(env: string): { files: string[]; stamp: string } {
    const dir = join(options.dir, env);
    let names: string[];
    try {
      names = readdirSync(dir)
        .filter((n) => n.endsWith('.pub') && !n.startsWith('.'))
        .sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') {
        return { files: [], stamp: NO_FOLDER };
      }
      throw err;
    }
    const parts: string[] = [];
    const files: string[] = [];
    for (const name of names) {
      try {
        const s = statSync(join(dir, name));
        if (!s.isFile()) continue;
        parts.push(`${name}:${s.size}:${s.mtimeMs}`);
        files.push(name);
      } catch {
        // removed between readdir and stat: not registered
      }
    }
    return { files, stamp: parts.join('|') };
  }

  function load(env: string, files: string[]): Map<string, RegisteredClientKey> {
    const keys = new Map<string, RegisteredClientKey>();
    for (const file of files) {
      const name = file.slice(0, -'.pub'.length);
      const publicKey = parseClientPublicKeyFile(readFileSafe(join(options.dir, env, file)));
      const kem = publicKey === undefined ? undefined : KEM_BY_LENGTH.get(publicKey.length);
      if (publicKey === undefined || kem === undefined || !canSealTo(kem, publicKey)) {
        logger.warn({ env, file }, 'client key file ignored: not an X25519 or X-Wing public key');
        continue;
      }
      keys.set(`${kem}:${bytesToHex(publicKey)}`, { name, kem, publicKey, fingerprint: clientKeyFingerprint(publicKey) });
    }
    logger.info(
      { env, keys: [...keys.values()].map((k) => ({ name: k.name, kem: k.kem, fingerprint: k.fingerprint })) },
      'client keys loaded',
    );
    return keys;
  }

  function canSealTo(kem: HpkeKemName, publicKey: Uint8Array): boolean {
    try {
      suites[kem].kem.encap(publicKey);
      return true;
    } catch {
      return false;
    }
  }

  function keysOf(env: string): ReadonlyMap<string, RegisteredClientKey> {
    const t = now();
    const cached = cache.get(env);
    if (cached && t - cached.checkedAt < recheckMs) return cached.keys;
    const { files, stamp } = listing(env);
    if (stamp === NO_FOLDER) {
      // No folder, no keys. Nothing is kept (nor logged) for it: the name is whatever a client
      // sent, and each new one would otherwise stay in memory for good. A folder that goes away
      // is logged once, as the revocation of its keys.
      if (cached !== undefined) {
        cache.delete(env);
        logger.info({ env, keys: [] }, 'client keys loaded');
      }
      return NO_KEYS;
    }
    const keys = cached?.stamp === stamp ? cached.keys : load(env, files);
    cache.set(env, { stamp, checkedAt: t, keys });
    return keys;
  }

  return {
    find(env, kem, publicKey) {
      return keysOf(env).get(`${kem}:${bytesToHex(publicKey)}`);
    },
  };
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Decodes a `.pub` file: one key, base64 or hex, `#` comment lines and white space ignored. */
export function parseClientPublicKeyFile(text: string): Uint8Array | undefined {
  const body = text
    .split(/\r?\n/)
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('')
    .replace(/\s+/g, '');
  if (body === '') return undefined;
  try {
    return /^[0-9a-fA-F]+$/.test(body) && body.length % 2 === 0 ? hexToBytes(body) : base64ToBytes(body);
  } catch {
    return undefined;
  }
}
