import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { cannotCreate, isDenied, processName } from './permissions';

/** The outcome of {@link loadOrCreateSecretFile}. */
export interface SecretFile {
  value: string;
  created: boolean;
  /** True when the file is readable by group or others (worth a warning). */
  exposed: boolean;
}

/**
 * Writes `content` to `path` with mode 0600, atomically (temporary file, then rename), creating
 * the directory with mode 0700 when missing. A folder this process may not write is an error
 * naming the file, the folder and the process's uid; a failed write leaves no temporary file.
 */
export function writeSecretFile(path: string, content: string): void {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (err) {
    // A write cut short (a full disk) or a rename refused leaves no copy of the secret behind.
    rmSync(tmp, { force: true });
    throw isDenied(err) ? cannotCreate(path, err) : err;
  }
}

/**
 * Reads a secret from `path`, or creates it with `create()` (mode 0600) on first start.
 * The trimmed file content is returned; nothing is logged here, callers log fingerprints.
 */
export function loadOrCreateSecretFile(path: string, create: () => string): SecretFile {
  const { persist, ...file } = readOrCreateSecretFile(path, create);
  persist();
  return file;
}

/**
 * As {@link loadOrCreateSecretFile}, without writing: a created secret is written by `persist()`
 * (an app's `start()`, so that building an app writes no file); a no-op for a secret read back.
 */
export function readOrCreateSecretFile(path: string, create: () => string): SecretFile & { persist: () => void } {
  try {
    const value = readFileSync(path, 'utf8').trim();
    const exposed = (statSync(path).mode & 0o077) !== 0;
    return { value, created: false, exposed, persist: () => undefined };
  } catch (err) {
    if (isDenied(err)) throw new Error(`cannot read ${path}: ${processName()} may not read it or reach its folder`, { cause: err });
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const value = create();
  let pending = true;
  return {
    value,
    created: true,
    exposed: false,
    persist: () => {
      if (!pending) return;
      pending = false;
      writeSecretFile(path, `${value}\n`);
    },
  };
}
