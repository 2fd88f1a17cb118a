import { accessSync, chmodSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from './logger';
import { cannotCreate, isDenied, ownerAndMode, processName } from './permissions';

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
 * left as it is when the process may read it, for the caller's open to say whether it can be
 * written: it is not this function's to refuse a database the process can read and write. Such a
 * file still readable or writable by others comes back `exposed`, with a `reason` to log as a
 * warning. A missing file this process may not create, one in a folder it may not reach and one
 * it may not read are errors naming the file or folder and the process's uid; other errors are
 * thrown.
 */
export function ensurePrivateFile(path: string): PrivateFile {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
    return { exposed: false };
  } catch (err) {
    if (!isDenied(err)) throw err;
    let stat;
    try {
      stat = statSync(path);
    } catch (statErr) {
      throw cannotCreate(path, err, (statErr as NodeJS.ErrnoException).code !== 'ENOENT');
    }
    try {
      accessSync(path, constants.R_OK);
    } catch (readErr) {
      throw new Error(`cannot read ${path}: ${processName()} may not read it (${ownerAndMode(stat)})`, { cause: readErr });
    }
    if ((stat.mode & 0o077) === 0) return { exposed: false };
    const code = (err as NodeJS.ErrnoException).code;
    return {
      exposed: true,
      reason: `${path} is readable or writable by other users and this process may not narrow it (${code}: ${ownerAndMode(stat)}): chmod 600 it as its owner`,
    };
  }
}

/** The part of a better-sqlite3 `Database` that {@link openDatabaseFile} uses. */
export interface DatabaseHandle {
  exec(sql: string): unknown;
  pragma(source: string): unknown;
  close(): unknown;
}

/** Options of {@link openDatabaseFile}. */
export interface DatabaseFileOptions<D extends DatabaseHandle> {
  /** Opens the database at `path` (`new Database(path)`). */
  open: (path: string) => D;
  /**
   * The durability of a commit: `FULL`, on disk when the commit returns (the WAL is fsynced at
   * every commit: a 200 survives a power cut); `NORMAL`, safe from a crash of the process, the
   * last commits before a power cut may be lost (fsynced at checkpoints).
   */
  synchronous: 'FULL' | 'NORMAL';
  /** Schema, migrations and the service's own pragmas, on the open handle; a throw closes it. */
  setup: (db: D) => void;
  /** A table of the schema: the write probe deletes no row of it. */
  probeTable: string;
  /** What the error calls the file (default `the SQLite file`; the relay's `the event log`). */
  what?: string;
  /** Warned when the file is another user's and left readable by others. */
  logger?: Logger;
}

/**
 * Opens a service's SQLite file in `DATA_DIR` the one way every service does:
 * - the file made private first ({@link ensurePrivateFile}), a warning logged when it is another
 *   user's and others may still read it;
 * - WAL journaling (its -wal and -shm files get the database's private mode), `synchronous` as
 *   asked, and a busy timeout of 5 s (a checkpoint or a second handle waits instead of failing);
 * - `setup` run on the open handle;
 * - a write probe (an empty `DELETE` on `probeTable`): SQLite opens a file it may not write
 *   read-only without a word, and the service would start and then fail every write, at a
 *   request or in the middle of a scan;
 * - the handle closed when any of it fails.
 * Every failure is one error for the start's fatal line: `cannot open <what> <path> (DATA_DIR): …`,
 * the read-only case saying what to do.
 */
export function openDatabaseFile<D extends DatabaseHandle>(path: string, options: DatabaseFileOptions<D>): D {
  const what = options.what ?? 'the SQLite file';
  const fail = (err: unknown): Error => new Error(`cannot open ${what} ${path} (DATA_DIR): ${explain(err)}`, { cause: err });
  let db: D;
  try {
    const file = ensurePrivateFile(path);
    if (file.exposed) options.logger?.warn({ file: path }, file.reason);
    db = options.open(path);
  } catch (err) {
    throw fail(err);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma('busy_timeout = 5000');
    options.setup(db);
    db.exec(`DELETE FROM "${options.probeTable.replaceAll('"', '""')}" WHERE 0`);
  } catch (err) {
    db.close();
    throw fail(err);
  }
  return db;
}

/** An open's error as the fatal line says it: a database it may only read says what to do. */
function explain(err: unknown): string {
  if ((err as { code?: unknown }).code !== 'SQLITE_READONLY') return (err as Error).message;
  return `it can be read but not written by ${processName()}: make the file, its -wal and -shm files and DATA_DIR writable`;
}
