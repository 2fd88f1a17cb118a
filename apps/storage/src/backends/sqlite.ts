import Database from 'better-sqlite3';
import { openDatabaseFile, type Logger } from '@repo/service';
import { tokenHashesMatch } from '../write-token';
import { expiresAt, type DeleteResult, type PutResult, type StorageBackend, type TouchResult, type WriteRefusal } from './backend';

/** Options of {@link createSqliteBackend}. */
export interface SqliteBackendOptions {
  /** The database file, kept mode 0600 (its -wal and -shm files too); its folder is created (mode 0700) when missing. */
  file: string;
  /** Writes committed in one transaction at most (default 1000). */
  maxBatch?: number;
  /** Warned when the file is another user's and left readable by others (see ensurePrivateFile). */
  logger?: Logger;
}

/** A write waiting for the next group commit: `apply` runs inside the transaction. */
interface PendingWrite {
  apply: () => unknown;
  resolve: (result: never) => void;
  reject: (err: unknown) => void;
}

/** The current schema version (`PRAGMA user_version`); 0 is a file from before write tokens. */
const SCHEMA_VERSION = 1;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS entries (
    key BLOB PRIMARY KEY,
    value BLOB NOT NULL,
    expires_at INTEGER,
    token_hash BLOB
  );
  CREATE INDEX IF NOT EXISTS entries_expires_at ON entries (expires_at) WHERE expires_at IS NOT NULL;
`;

/**
 * Creates the table, or brings a file written by an older version up to date: a file from
 * before write tokens has no `token_hash` column; it is added (NULL in every existing row, so
 * those values stay immutable: docs/storage.md, "Write tokens"). `ADD COLUMN` of a nullable
 * column only rewrites the table's definition, not its rows, so it is instant on any size.
 */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.exec(SCHEMA);
    const columns = (db.prepare('PRAGMA table_info(entries)').all() as { name: string }[]).map((c) => c.name);
    if (!columns.includes('token_hash')) db.exec('ALTER TABLE entries ADD COLUMN token_hash BLOB');
    if ((db.pragma('user_version', { simple: true }) as number) < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * The embedded backend: one SQLite file in WAL mode with `synchronous=FULL`, so a commit has
 * reached the disk (fsync of the WAL) when it returns. Writes (stores, deletes, touches) are
 * not committed one by one: those arriving in the same turn of the event loop are queued and
 * committed together in one transaction (group commit), in the order they arrived, so N
 * concurrent writes cost one fsync instead of N, and each caller is answered only after that
 * commit. Keys and values are kept as bytes (half the size of their hex). The file is made
 * private (the stored values are the clients' own) and opened by @repo/service's
 * openDatabaseFile: one that cannot be opened or written throws `cannot open the SQLite file …
 * (DATA_DIR): …`.
 */
export function createSqliteBackend(options: SqliteBackendOptions): StorageBackend {
  const maxBatch = options.maxBatch ?? 1_000;
  const db = openDatabaseFile(options.file, {
    open: (file) => new Database(file),
    // FULL: the WAL is fsynced at every commit, so a 200 survives a power cut, not only kill -9.
    synchronous: 'FULL',
    setup: migrate,
    probeTable: 'entries',
    logger: options.logger,
  });

  // An existing row is replaced only when it has expired: `changes` is 0 when the key is live.
  const insert = db.prepare(`
    INSERT INTO entries (key, value, expires_at, token_hash) VALUES (?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, token_hash = excluded.token_hash
    WHERE entries.expires_at IS NOT NULL AND entries.expires_at <= ?
  `);
  const live = 'key = ? AND (expires_at IS NULL OR expires_at > ?)';
  const select = db.prepare(`SELECT value, expires_at AS expiresAt FROM entries WHERE ${live}`);
  const selectToken = db.prepare(`SELECT token_hash FROM entries WHERE ${live}`).pluck();
  const deleteRow = db.prepare('DELETE FROM entries WHERE key = ?');
  const setExpiry = db.prepare('UPDATE entries SET expires_at = ? WHERE key = ?');
  const countLive = db.prepare('SELECT COUNT(*) FROM entries WHERE expires_at IS NULL OR expires_at > ?').pluck();
  const sweepStatement = db.prepare(
    'DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)',
  );

  /** Inside a write transaction: whether the live row under `key` may be changed with `tokenHash`. */
  function authorize(key: Buffer, tokenHash: Buffer, now: number): WriteRefusal | undefined {
    const stored = selectToken.get(key, now) as Buffer | null | undefined;
    if (stored === undefined) return 'not_found';
    if (stored === null) return 'no_token';
    return tokenHashesMatch(stored, tokenHash) ? undefined : 'forbidden';
  }

  const commitBatch = db.transaction((batch: PendingWrite[]) => batch.map((p) => p.apply()));

  let pending: PendingWrite[] = [];
  let scheduled = false;
  let closed = false;

  function flush(): void {
    scheduled = false;
    while (pending.length > 0) {
      const batch = pending.length <= maxBatch ? pending : pending.slice(0, maxBatch);
      pending = pending.length <= maxBatch ? [] : pending.slice(maxBatch);
      commit(batch);
    }
  }

  function commit(batch: PendingWrite[]): void {
    let results: unknown[];
    try {
      results = commitBatch(batch);
    } catch {
      // The whole transaction rolled back: retry each write alone so one bad write (a disk
      // full for a huge value) fails only its own request.
      for (const p of batch) {
        try {
          p.resolve(db.transaction(p.apply)() as never);
        } catch (err) {
          p.reject(err);
        }
      }
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i] as never));
  }

  /** Queues `apply` for the next group commit; resolves with its result once committed. */
  function enqueue<T>(apply: () => T): Promise<T> {
    if (closed) return Promise.reject(new Error('storage backend is closed'));
    return new Promise<T>((resolve, reject) => {
      pending.push({ apply, resolve: resolve, reject });
      if (!scheduled) {
        scheduled = true;
        // setImmediate runs after the I/O callbacks of this loop turn: every request parsed
        // in this turn joins the batch.
        setImmediate(flush);
      }
    });
  }

  return {
    name: 'sqlite',
    put(key, value, ttlSeconds, now, tokenHash) {
      const k = Buffer.from(key, 'hex');
      const v = Buffer.from(value, 'hex');
      const at = expiresAt(now, ttlSeconds);
      return enqueue((): PutResult => (insert.run(k, v, at, tokenHash, now).changes === 1 ? 'stored' : 'exists'));
    },
    async get(key, now) {
      const row = select.get(Buffer.from(key, 'hex'), now) as { value: Buffer; expiresAt: number | null } | undefined;
      return row === undefined ? undefined : { value: row.value.toString('hex'), expiresAt: row.expiresAt };
    },
    delete(key, tokenHash, now) {
      const k = Buffer.from(key, 'hex');
      return enqueue((): DeleteResult => {
        const refused = authorize(k, tokenHash, now);
        if (refused !== undefined) return refused;
        deleteRow.run(k);
        return 'deleted';
      });
    },
    touch(key, tokenHash, ttlSeconds, now) {
      const k = Buffer.from(key, 'hex');
      const at = expiresAt(now, ttlSeconds);
      return enqueue((): TouchResult => {
        const refused = authorize(k, tokenHash, now);
        if (refused !== undefined) return refused;
        setExpiry.run(at, k);
        return { expiresAt: at };
      });
    },
    async sweep(now, batch) {
      return sweepStatement.run(now, batch).changes;
    },
    async count(now) {
      return countLive.get(now) as number;
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      if (closed) return;
      closed = true;
      flush();
      db.close();
    },
  };
}
