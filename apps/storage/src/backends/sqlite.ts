import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { expiresAt, type PutResult, type StorageBackend } from './backend';

/** Options of {@link createSqliteBackend}. */
export interface SqliteBackendOptions {
  /** The database file; its folder is created (mode 0700) when missing. */
  file: string;
  /** Stores committed in one transaction at most (default 1000). */
  maxBatch?: number;
}

interface PendingPut {
  key: Buffer;
  value: Buffer;
  expiresAt: number | null;
  now: number;
  resolve: (result: PutResult) => void;
  reject: (err: unknown) => void;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS entries (
    key BLOB PRIMARY KEY,
    value BLOB NOT NULL,
    expires_at INTEGER
  );
  CREATE INDEX IF NOT EXISTS entries_expires_at ON entries (expires_at) WHERE expires_at IS NOT NULL;
`;

/**
 * The embedded backend: one SQLite file in WAL mode with `synchronous=FULL`, so a commit has
 * reached the disk (fsync of the WAL) when it returns. Stores are not committed one by one:
 * those arriving in the same turn of the event loop are queued and committed together in one
 * transaction (group commit), so N concurrent stores cost one fsync instead of N, and each
 * caller is answered only after that commit. Keys and values are kept as bytes (half the size
 * of their hex). Throws what better-sqlite3 throws when the file cannot be opened.
 */
export function createSqliteBackend(options: SqliteBackendOptions): StorageBackend {
  const maxBatch = options.maxBatch ?? 1_000;
  mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  const db = new Database(options.file);
  db.pragma('journal_mode = WAL');
  // FULL: the WAL is fsynced at every commit, so a 200 survives a power cut, not only kill -9.
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);

  // An existing row is replaced only when it has expired: `changes` is 0 when the key is live.
  const insert = db.prepare(`
    INSERT INTO entries (key, value, expires_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
    WHERE entries.expires_at IS NOT NULL AND entries.expires_at <= ?
  `);
  const select = db.prepare('SELECT value FROM entries WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)').pluck();
  const sweepStatement = db.prepare(
    'DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)',
  );
  const runOne = (p: PendingPut): PutResult => (insert.run(p.key, p.value, p.expiresAt, p.now).changes === 1 ? 'stored' : 'exists');
  const commitBatch = db.transaction((batch: PendingPut[]) => batch.map(runOne));

  let pending: PendingPut[] = [];
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

  function commit(batch: PendingPut[]): void {
    let results: PutResult[];
    try {
      results = commitBatch(batch);
    } catch {
      // The whole transaction rolled back: retry each store alone so one bad write (a disk
      // full for a huge value) fails only its own request.
      for (const p of batch) {
        try {
          p.resolve(db.transaction(runOne)(p));
        } catch (err) {
          p.reject(err);
        }
      }
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]!));
  }

  return {
    name: 'sqlite',
    put(key, value, ttlSeconds, now) {
      if (closed) return Promise.reject(new Error('storage backend is closed'));
      return new Promise<PutResult>((resolve, reject) => {
        pending.push({
          key: Buffer.from(key, 'hex'),
          value: Buffer.from(value, 'hex'),
          expiresAt: expiresAt(now, ttlSeconds),
          now,
          resolve,
          reject,
        });
        if (!scheduled) {
          scheduled = true;
          // setImmediate runs after the I/O callbacks of this loop turn: every request parsed
          // in this turn joins the batch.
          setImmediate(flush);
        }
      });
    },
    async get(key, now) {
      const value = select.get(Buffer.from(key, 'hex'), now) as Buffer | undefined;
      return value?.toString('hex');
    },
    async sweep(now, batch) {
      return sweepStatement.run(now, batch).changes;
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
