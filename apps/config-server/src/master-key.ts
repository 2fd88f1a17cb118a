import { join } from 'node:path';
import { bytesToHex, generateKey, keyFingerprint, parseKey } from '@repo/crypto';
import { readOrCreateSecretFile } from '@repo/service';
import type { ConfigServerConfig } from './config';

/** The master key and where it came from (for one log line, by fingerprint). */
export interface MasterKey {
  key: Uint8Array;
  source: 'environment' | 'file' | 'generated';
  path?: string;
  fingerprint: string;
  /** The key file is readable by group or others. */
  exposed: boolean;
}

/** `CONFIG_MASTER_KEY` when set, else `DATA_DIR/master.key`, generated (mode 0600) on first start. */
export function loadMasterKey(config: Parameters<typeof readOrCreateMasterKey>[0]): MasterKey {
  const { persist, ...key } = readOrCreateMasterKey(config);
  persist();
  return key;
}

/** As {@link loadMasterKey}, without writing: a generated key is written by `persist()` (the app's `start()`). */
export function readOrCreateMasterKey(config: Pick<ConfigServerConfig, 'masterKeyHex' | 'dataDir'>): MasterKey & { persist: () => void } {
  if (config.masterKeyHex !== undefined) {
    const key = parseKey(config.masterKeyHex, 'CONFIG_MASTER_KEY');
    return { key, source: 'environment', fingerprint: keyFingerprint(key), exposed: false, persist: () => undefined };
  }
  const path = join(config.dataDir, 'master.key');
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
