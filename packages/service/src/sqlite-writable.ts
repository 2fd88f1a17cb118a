/** The part of a better-sqlite3 `Database` that {@link assertDatabaseWritable} uses. */
export interface SqliteExec {
  exec(sql: string): unknown;
}

/**
 * Throws, saying what to do, when the SQLite database `db` can be read but not written by this
 * process. SQLite opens such a file (another user's 0644, a 0444 file, a read-only mount)
 * read-only without a word, and a service would start and then fail every write, at a request
 * or in the middle of a scan. The probe is an empty `DELETE` on `table`, one of its tables: it
 * writes nothing. Other errors are thrown as they are.
 */
export function assertDatabaseWritable(db: SqliteExec, table: string): void {
  try {
    db.exec(`DELETE FROM "${table.replaceAll('"', '""')}" WHERE 0`);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'SQLITE_READONLY') throw err;
    const uid = process.getuid?.();
    throw new Error(
      `it can be read but not written by this process${uid === undefined ? '' : ` (uid ${uid})`}: make the file, its -wal and -shm files and DATA_DIR writable`,
      { cause: err },
    );
  }
}
