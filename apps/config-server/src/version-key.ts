import { join } from 'node:path';
import { bytesToHex, generateKey, keyFingerprint, parseKey } from '@repo/crypto';
import { loadOrCreateSecretFile } from '@repo/service';
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
export function loadVersionKey(config: Pick<ConfigServerConfig, 'versionKeyHex' | 'dataDir'>): VersionKey {
  if (config.versionKeyHex !== undefined) {
    const key = parseKey(config.versionKeyHex, 'CONFIG_VERSION_KEY');
    return { key, source: 'environment', fingerprint: keyFingerprint(key), exposed: false };
  }
  const path = join(config.dataDir, 'version.key');
  const file = loadOrCreateSecretFile(path, () => bytesToHex(generateKey()));
  const key = parseKey(file.value, path);
  return { key, source: file.created ? 'generated' : 'file', path, fingerprint: keyFingerprint(key), exposed: file.exposed };
}
