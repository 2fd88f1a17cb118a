import { closeSync, fdatasync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openDatabaseFile, type Logger } from '@repo/service';
import type { Appended, EventLog, OldestPoint, Retention, StoredEvent } from './event-log';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  stored_at INTEGER NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_stored_at ON events (stored_at);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

interface PendingAppend {
  id: string;
  type: string;
  text: string;
  resolve: (r: Appended) => void;
  reject: (err: Error) => void;
}

/** Options of {@link createSqliteLog}. */
export interface SqliteLogOptions {
  file: string;
  retention: Retention;
  /** Clock (ms), for tests. */
  now?: () => number;
  /** Warned when the file is another user's and left readable by others (see ensurePrivateFile). */
  logger?: Logger;
}

/**
 * The event log in one SQLite file in WAL mode. Appends of one turn of the event loop are
 * committed together in one transaction (group commit), each caller answered in order. The
 * commit itself does not wait for the disk (`synchronous=NORMAL`: the event is in the WAL, safe
 * from a process crash, and delivery need not wait); durability is a second step: an
 * `fdatasync` of the WAL file on the thread pool, shared by every commit made before it started,
 * resolves each event's `durable`, and the relay acknowledges only then, so an acknowledged event
 * survives a power cut as with `synchronous=FULL`, without blocking the event loop on the disk.
 * (A checkpoint copying the WAL into the database syncs the database itself in this mode.)
 * The id column is unique: a duplicate is found by the insert itself, and the log is the relay's
 * de-duplication record for as long as it keeps an event.
 */
export function createSqliteLog(options: SqliteLogOptions): EventLog {
  const now = options.now ?? Date.now;
  // Private (the events carry payments), also a log written by an earlier version with the
  // umask's mode; `cannot open the event log … (DATA_DIR): …` when it cannot be opened or written.
  const db = openDatabaseFile(options.file, {
    open: (file) => new Database(file),
    synchronous: 'NORMAL',
    setup: (opened) => opened.exec(SCHEMA),
    probeTable: 'events',
    what: 'the event log',
    logger: options.logger,
  });

  const insert = db.prepare('INSERT OR IGNORE INTO events (id, type, stored_at, text) VALUES (?, ?, ?, ?)');
  const seqOf = db.prepare<[string], number>('SELECT seq FROM events WHERE id = ?').pluck();
  const lastBefore = db.prepare<[number], number | null>('SELECT max(seq) FROM events WHERE stored_at < ?').pluck();
  const after = db.prepare<[number, number], { seq: number; id: string; type: string; stored_at: number; text: string }>(
    'SELECT seq, id, type, stored_at, text FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
  );
  const oldest = db.prepare<[], { id: string; stored_at: number }>('SELECT id, stored_at FROM events ORDER BY seq LIMIT 1');
  const countEvents = db.prepare<[], number>('SELECT COUNT(*) FROM events').pluck();
  const getMeta = db.prepare<[string], string>('SELECT value FROM meta WHERE key = ?').pluck();
  const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const maxStoredBefore = db.prepare<[number], number | null>('SELECT max(stored_at) FROM events WHERE stored_at < ?').pluck();
  const deleteBefore = db.prepare('DELETE FROM events WHERE stored_at < ?');
  const nthNewest = db.prepare<[number], { seq: number; stored_at: number }>(
    'SELECT seq, stored_at FROM events ORDER BY seq DESC LIMIT 1 OFFSET ?',
  );
  const maxStoredThrough = db.prepare<[number], number | null>('SELECT max(stored_at) FROM events WHERE seq <= ?').pluck();
  const deleteThrough = db.prepare('DELETE FROM events WHERE seq <= ?');

  const commit = db.transaction((batch: PendingAppend[], t: number) =>
    batch.map((p) => {
      const r = insert.run(p.id, p.type, t, p.text);
      return r.changes === 1 ? { seq: String(r.lastInsertRowid), fresh: true } : { seq: String(seqOf.get(p.id)), fresh: false };
    }),
  );

  // The WAL file exists once the database is written to in WAL mode (SQLite removes it when the
  // last connection closes, and keeps the same file while one is open): write once, then open it.
  setMeta.run('opened_at', String(now()));
  const walFd = openSync(`${options.file}-wal`, 'r');
  let running: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  /** A sync that starts after every commit made so far; callers in the meantime share it. */
  function syncWal(): Promise<void> {
    queued ??= running.then(
      () =>
        new Promise<void>((resolve, reject) => {
          queued = undefined;
          fdatasync(walFd, (err) => (err ? reject(err) : resolve()));
        }),
    );
    running = queued.catch(() => undefined);
    return queued;
  }

  let pending: PendingAppend[] = [];
  let scheduled = false;
  let closed = false;

  function flush(): void {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    try {
      const results = commit(batch, now());
      const durable = syncWal();
      durable.catch(() => undefined);
      batch.forEach((p, i) => p.resolve({ ...results[i]!, durable }));
    } catch (err) {
      for (const p of batch) p.reject(err as Error);
    }
  }

  /** The newest stored_at removed by retention: a `since` time at or before it may have a gap. */
  const trimmedThrough = (): number => Number(getMeta.get('trimmed_through') ?? -1);
  const raiseTrimmed = (t: number | null | undefined) => {
    if (t !== null && t !== undefined && t > trimmedThrough()) setMeta.run('trimmed_through', String(t));
  };
  const oldestPoint = (): OldestPoint => {
    const row = oldest.get();
    return row === undefined ? {} : { oldest_id: row.id, oldest_timestamp: row.stored_at };
  };

  return {
    kind: 'sqlite',
    append(event) {
      if (closed) return Promise.reject(new Error('event log is closed'));
      return new Promise((resolve, reject) => {
        pending.push({ ...event, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async locate(cursor) {
      if ('id' in cursor) {
        const seq = seqOf.get(cursor.id);
        return seq === undefined ? { ok: false, oldest: oldestPoint() } : { ok: true, after: String(seq) };
      }
      if (cursor.time <= trimmedThrough()) return { ok: false, oldest: oldestPoint() };
      const seq = lastBefore.get(cursor.time);
      return { ok: true, after: seq === null || seq === undefined ? null : String(seq) };
    },
    async readAfter(from, limit): Promise<StoredEvent[]> {
      return after
        .all(from === null ? 0 : Number(from), limit)
        .map((r) => ({ seq: String(r.seq), id: r.id, type: r.type, storedAt: r.stored_at, text: r.text }));
    },
    async trim(t = now()) {
      return db.transaction(() => {
        const cutoff = t - options.retention.maxAgeMs;
        raiseTrimmed(maxStoredBefore.get(cutoff));
        let removed = deleteBefore.run(cutoff).changes;
        const last = nthNewest.get(options.retention.maxEvents);
        if (last !== undefined) {
          raiseTrimmed(maxStoredThrough.get(last.seq));
          removed += deleteThrough.run(last.seq).changes;
        }
        return removed;
      })();
    },
    async count() {
      return countEvents.get() ?? 0;
    },
    async getMeta(key) {
      return getMeta.get(`x:${key}`);
    },
    async setMeta(key, value) {
      setMeta.run(`x:${key}`, value);
    },
    async close() {
      if (closed) return;
      flush();
      closed = true;
      await running;
      closeSync(walFd);
      db.close();
    },
  };
}
