import { join } from 'node:path';
import { bytesToHex, generateKey, keyFingerprint, parseKey } from '@repo/crypto';
import { readOrCreateSecretFile } from '@repo/service';
import type { ConfigServerConfig } from './config';

/** The key versions are computed under, and where it came from (for one log line, by fingerprint). */
export interface VersionKey {
  key: Uint8Array;
  source: 'environment' | 'file' | 'generated';
  path?: string;
  fingerprint: string;
  /** The key file is readable by group or others. */
  exposed: boolean;
}

/**
 * `CONFIG_VERSION_KEY` when set, else `DATA_DIR/version.key`, generated (mode 0600) on first
 * start, as the master key is. Replicas behind one name must share it, or they disagree on
 * versions (config-server README, "Versions").
 */
export function loadVersionKey(config: Parameters<typeof readOrCreateVersionKey>[0]): VersionKey {
  const { persist, ...key } = readOrCreateVersionKey(config);
  persist();
  return key;
}

/** As {@link loadVersionKey}, without writing: a generated key is written by `persist()` (the app's `start()`). */
export function readOrCreateVersionKey(
  config: Pick<ConfigServerConfig, 'versionKeyHex' | 'dataDir'>,
): VersionKey & { persist: () => void } {
  if (config.versionKeyHex !== undefined) {
    const key = parseKey(config.versionKeyHex, 'CONFIG_VERSION_KEY');
    return { key, source: 'environment', fingerprint: keyFingerprint(key), exposed: false, persist: () => undefined };
  }
  const path = join(config.dataDir, 'version.key');
  const file = readOrCreateSecretFile(path, () => bytesToHex(generateKey()));
  const key = parseKey(file.value, path);
  return {
    key,
    source: file.created ? 'generated' : 'file',
    path,
    fingerprint: keyFingerprint(key),
    exposed: file.exposed,
    persist: file.persist,
  };
}
