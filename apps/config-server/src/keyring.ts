import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { deriveKey, keyFingerprint, parseKey } from '@repo/crypto';

/** HKDF `info` for an environment's key: versioned, so a future scheme cannot collide. */
export function environmentKeyInfo(env: string): string {
  return `config-server/v1/env/${env}`;
}

/** Where an environment's key comes from. */
export interface EnvironmentKey {
  key: Uint8Array;
  source: 'file' | 'derived';
  fingerprint: string;
}

/** Per-environment keys: `KEYS_DIR/<env>.key` when present, else HKDF-SHA256 of the master key. */
export interface Keyring {
  /** The key of `env`; throws when its key file exists but is malformed. */
  keyFor(env: string): EnvironmentKey;
}

/** Options of {@link createKeyring}. */
export interface KeyringOptions {
  keysDir: string;
  masterKey: Uint8Array;
  /** How long a looked-up key file is trusted before it is checked again (ms). */
  recheckMs?: number;
  now?: () => number;
}

/**
 * Creates the keyring. A key file wins over derivation (docs/config-server.md, "Keys") and is
 * re-read when it changes, so an operator can rotate a key without a restart.
 */
export function createKeyring(options: KeyringOptions): Keyring {
  const recheckMs = options.recheckMs ?? 2_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { value: EnvironmentKey; checkedAt: number; mtimeMs: number }>();

  function lookup(env: string): { value: EnvironmentKey; mtimeMs: number } {
    const path = join(options.keysDir, `${env}.key`);
    let mtimeMs = -1;
    try {
      const info = statSync(path);
      // Read synchronously: a named pipe (or any special file) there would block the whole server.
      if (!info.isFile()) throw new Error(`${env}.key is not a regular file`);
      mtimeMs = info.mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const cached = cache.get(env);
    if (cached && cached.mtimeMs === mtimeMs) return cached;
    if (mtimeMs === -1) {
      const key = deriveKey(options.masterKey, environmentKeyInfo(env));
      return { value: { key, source: 'derived', fingerprint: keyFingerprint(key) }, mtimeMs };
    }
    const key = parseKey(readFileSync(path, 'utf8'), `${env}.key`);
    return { value: { key, source: 'file', fingerprint: keyFingerprint(key) }, mtimeMs };
  }

  return {
    keyFor(env) {
      const t = now();
      const cached = cache.get(env);
      if (cached && t - cached.checkedAt < recheckMs) return cached.value;
      const found = lookup(env);
      cache.set(env, { ...found, checkedAt: t });
      return found.value;
    },
  };
}
