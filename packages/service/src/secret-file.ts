import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The outcome of {@link loadOrCreateSecretFile}. */
export interface SecretFile {
  value: string;
  created: boolean;
  /** True when the file is readable by group or others (worth a warning). */
  exposed: boolean;
}

/** The errors of a file operation the process is not allowed (permissions, a read-only mount). */
function isDenied(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}

/** This process as a permission error names it: `this process (uid N)`. */
function processName(): string {
  const uid = process.getuid?.();
  return uid === undefined ? 'this process' : `this process (uid ${uid})`;
}

/**
 * A file that could not be created or reached, as an operator reads it: where, and who this
 * process runs as (`reach`: it may not even look into the folder).
 */
function cannotCreate(path: string, err: unknown, reach = false): Error {
  const folder = dirname(path);
  let where = `${processName()} may not ${reach ? 'reach' : 'write in'} ${folder}`;
  if ((err as NodeJS.ErrnoException).code === 'EROFS') where = `${folder} is on a read-only file system`;
  return new Error(`cannot create ${path}: ${where}`, { cause: err });
}

/**
 * Writes `content` to `path` with mode 0600, atomically (temporary file, then rename), creating
 * the directory with mode 0700 when missing. A folder this process may not write is an error
 * naming the file, the folder and the process's uid.
 */
export function writeSecretFile(path: string, content: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (err) {
    throw isDenied(err) ? cannotCreate(path, err) : err;
  }
}

/** What {@link ensurePrivateFile} left: `exposed` when the file is still readable or writable by others. */
export interface PrivateFile {
  exposed: boolean;
  /** Why it could not be narrowed, for a warning: its owner and mode, and what to do. */
  reason?: string;
}

/**
 * Makes `path` a file only its owner reads and writes before something else opens it: created
 * empty with mode 0600 when missing (the directory 0700), an existing one narrowed to 0600. For a
 * SQLite database that holds what others must not read: SQLite gives its -wal and -shm files the
 * database's mode.
 *
 * A file this process may not change (another user's, a read-only mount: EACCES, EPERM, EROFS) is
 * left as it is, for the caller's open to say whether it can be used: it is not this function's
 * to refuse a database the process can read and write. Such a file still readable or writable by
 * others comes back `exposed`, with a `reason` to log as a warning. A missing file this process
 * may not create, or one in a folder it may not reach, is an error naming the folder and the
 * process's uid; other errors are thrown.
 */
export function ensurePrivateFile(path: string): PrivateFile {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
    return { exposed: false };
  } catch (err) {
    if (!isDenied(err)) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    let stat;
    try {
      stat = statSync(path);
    } catch (statErr) {
      throw cannotCreate(path, err, (statErr as NodeJS.ErrnoException).code !== 'ENOENT');
    }
    const mode = stat.mode & 0o777;
    if ((mode & 0o077) === 0) return { exposed: false };
    const owner = `owned by uid ${stat.uid}, mode ${mode.toString(8).padStart(4, '0')}`;
    return {
      exposed: true,
      reason: `${path} is readable or writable by other users and this process may not narrow it (${code}: ${owner}): chmod 600 it as its owner`,
    };
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
