import { join } from 'node:path';
import { bytesToHex, generateKey, keyFingerprint, parseKey } from '@repo/crypto';
import { readOrCreateSecretFile, type Logger } from '@repo/service';
import type { ConfigServerConfig } from './config';

/** Where one of the server's own keys comes from: a variable, else a file in `DATA_DIR`. */
export interface KeySource {
  /** What the log lines call it (`master key`, `version key`). */
  name: string;
  /** The variable's value (64 hex characters), when it is set. */
  hex: string | undefined;
  /** The variable's name, for the error of a malformed value. */
  variable: string;
  dataDir: string;
  /** The key file's name in `dataDir`. */
  fileName: string;
}

/** A key of the server and where it came from (for one log line, by fingerprint). */
export interface ServerKey {
  key: Uint8Array;
  source: 'environment' | 'file' | 'generated';
  path?: string;
  fingerprint: string;
  /** The key file is readable by group or others. */
  exposed: boolean;
}

/** A key read or generated in memory; a generated key is written by `persist()` (the app's `start()`). */
export interface PendingKey extends ServerKey {
  name: string;
  persist: () => void;
}

/** The master key: `CONFIG_MASTER_KEY`, else `DATA_DIR/master.key` (docs/config-server.md, "Keys"). */
export function masterKeySource(config: Pick<ConfigServerConfig, 'masterKeyHex' | 'dataDir'>): KeySource {
  return { name: 'master key', hex: config.masterKeyHex, variable: 'CONFIG_MASTER_KEY', dataDir: config.dataDir, fileName: 'master.key' };
}

/**
 * The key versions are computed under: `CONFIG_VERSION_KEY`, else `DATA_DIR/version.key`. Replicas
 * behind one name must share it, or they disagree on versions (docs/config-server.md, "Versions").
 */
export function versionKeySource(config: Pick<ConfigServerConfig, 'versionKeyHex' | 'dataDir'>): KeySource {
  return {
    name: 'version key',
    hex: config.versionKeyHex,
    variable: 'CONFIG_VERSION_KEY',
    dataDir: config.dataDir,
    fileName: 'version.key',
  };
}

/** The variable when set, else the key file, else a new key (kept in memory until `persist()`, written mode 0600). */
export function readOrCreateKey(source: KeySource): PendingKey {
  const { name } = source;
  if (source.hex !== undefined) {
    const key = parseKey(source.hex, source.variable);
    return { name, key, source: 'environment', fingerprint: keyFingerprint(key), exposed: false, persist: () => undefined };
  }
  const path = join(source.dataDir, source.fileName);
  const file = readOrCreateSecretFile(path, () => bytesToHex(generateKey()));
  const key = parseKey(file.value, path);
  return {
    name,
    key,
    source: file.created ? 'generated' : 'file',
    path,
    fingerprint: keyFingerprint(key),
    exposed: file.exposed,
    persist: file.persist,
  };
}

/** As {@link readOrCreateKey}, and a generated key is written at once (the operator command). */
export function loadKey(source: KeySource): ServerKey {
  const { persist, name: _name, ...key } = readOrCreateKey(source);
  persist();
  return key;
}

/** Writes a generated key and says where the key came from, by fingerprint (never the key). */
export function persistKey(pending: PendingKey, logger: Logger): void {
  pending.persist();
  logger.info({ source: pending.source, path: pending.path, fingerprint: pending.fingerprint }, `${pending.name} loaded`);
  if (pending.exposed) logger.warn({ path: pending.path }, `${pending.name} file is readable by others: chmod 600 it`);
}
