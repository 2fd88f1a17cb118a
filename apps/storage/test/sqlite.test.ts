import Database from 'better-sqlite3';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createSqliteBackend, createSweeper, hashWriteToken, type StorageBackend } from '../src';
import {
  createTestClock,
  deleteJson,
  getJson,
  makeTempDir,
  postJson,
  randomKey,
  randomValue,
  removeDir,
  startService,
  storeValue,
  testConfig,
  touchJson,
} from './support/service';
import { eventually } from './support/wait';

/** Reads the database file through a second, read-only connection, as an operator would. */
function inspect<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The token hash of the direct backend calls here. */
const H = hashWriteToken(randomKey());

const rowCount = (file: string): number =>
  inspect(file, (db) => (db.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n);

// Both suites get a fresh backend on a file of its own for each test.
describe('SQLite file', () => {
  let dir: string;
  let file: string;
  let backend: StorageBackend;

  beforeEach(() => {
    dir = makeTempDir();
    file = join(dir, 'storage.sqlite');
    backend = createSqliteBackend({ file });
  });

  afterEach(async () => {
    await backend.close();
    removeDir(dir);
  });

  describe('SQLite backend', () => {
    it('keeps its file in WAL mode', () => {
      expect(inspect(file, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
    });

    it('commits with synchronous=FULL on its own connection, so a 200 survives a power cut', async () => {
      // The pragma belongs to a connection, so another handle cannot read it: take the
      // backend's own connection from the first pragma it runs.
      const pragma = jest.spyOn(Database.prototype, 'pragma');
      const other = createSqliteBackend({ file: join(dir, 'other.sqlite') });
      const connection = pragma.mock.contexts[0] as Database.Database;
      pragma.mockRestore();
      try {
        expect(connection.pragma('synchronous', { simple: true })).toBe(2); // 2 = FULL, 1 = NORMAL
      } finally {
        await other.close();
      }
    });

    it('keeps its files readable by this user only, and narrows a file left readable by others', async () => {
      await backend.put(randomKey(), randomValue(), null, Date.now(), H);
      const mode = (path: string): number => statSync(path).mode & 0o777;
      expect(mode(file)).toBe(0o600);
      expect(mode(`${file}-wal`)).toBe(0o600);
      const nested = join(dir, 'new', 'storage.sqlite');
      await createSqliteBackend({ file: nested }).close();
      expect(mode(join(dir, 'new'))).toBe(0o700);
      expect(mode(nested)).toBe(0o600);
      await backend.close();
      chmodSync(file, 0o644);
      backend = createSqliteBackend({ file });
      expect(mode(file)).toBe(0o600);
      expect(rowCount(file)).toBe(1);
    });

    it('commits stores issued together and answers each of them', async () => {
      const t = Date.now();
      const keys = Array.from({ length: 300 }, () => randomKey());
      const results = await Promise.all([...keys, keys[0]!].map((key) => backend.put(key, 'ab', 60, t, H)));
      expect(results.filter((r) => r === 'stored')).toHaveLength(300);
      expect(results[300]).toBe('exists');
      expect(rowCount(file)).toBe(300);
    });

    it('finishes pending stores when it closes', async () => {
      const key = randomKey();
      const put = backend.put(key, 'cd', null, Date.now(), H);
      await backend.close();
      await expect(put).resolves.toBe('stored');
      backend = createSqliteBackend({ file });
      expect((await backend.get(key, Date.now()))?.value).toBe('cd');
    });

    it('commits deletes and touches in the batch of the stores of the same turn, in the order they came', async () => {
      const t = Date.now();
      const key = randomKey();
      const other = hashWriteToken(randomKey());
      const results = await Promise.all([
        backend.put(key, 'aa', 60, t, H),
        backend.delete(key, other, t),
        backend.touch(key, H, 600, t),
        backend.delete(key, H, t),
        backend.touch(key, H, 600, t),
        backend.put(key, 'bb', 60, t, other),
        backend.delete(key, H, t),
      ]);
      expect(results).toEqual(['stored', 'forbidden', { expiresAt: t + 600_000 }, 'deleted', 'not_found', 'stored', 'forbidden']);
      expect(await backend.get(key, t)).toEqual({ value: 'bb', expiresAt: t + 60_000 });
    });

    it('finishes pending deletes when it closes', async () => {
      const key = randomKey();
      await backend.put(key, 'cd', null, Date.now(), H);
      const deleted = backend.delete(key, H, Date.now());
      await backend.close();
      await expect(deleted).resolves.toBe('deleted');
      backend = createSqliteBackend({ file });
      expect(await backend.get(key, Date.now())).toBeUndefined();
      expect(rowCount(file)).toBe(0);
    });
  });

  describe('sweeper', () => {
    it('deletes expired rows in batches and keeps the live ones', async () => {
      const clock = createTestClock();
      await Promise.all(Array.from({ length: 25 }, () => backend.put(randomKey(), 'aa', 10, clock.now(), H)));
      await Promise.all(Array.from({ length: 5 }, () => backend.put(randomKey(), 'bb', 1_000, clock.now(), H)));
      await Promise.all(Array.from({ length: 3 }, () => backend.put(randomKey(), 'cc', null, clock.now(), H)));
      const sweep = jest.spyOn(backend, 'sweep');
      const sweeper = createSweeper({ backend, now: clock.now, intervalMs: 60_000, batchSize: 10 });

      expect(await sweeper.runOnce()).toBe(0);
      expect(rowCount(file)).toBe(33);
      clock.advance(10_000);
      sweep.mockClear();
      expect(await sweeper.runOnce()).toBe(25);
      expect(sweep.mock.calls.map(([, batch]) => batch)).toEqual([10, 10, 10]);
      expect(rowCount(file)).toBe(8);
      await sweeper.stop();
    });

    it('keeps the file from growing when values keep expiring', async () => {
      const clock = createTestClock();
      const sweeper = createSweeper({ backend, now: clock.now, intervalMs: 60_000, batchSize: 100 });
      const pageCounts: number[] = [];
      for (let round = 0; round < 5; round++) {
        await Promise.all(Array.from({ length: 200 }, () => backend.put(randomKey(), randomValue(1_024), 5, clock.now(), H)));
        clock.advance(5_000);
        expect(await sweeper.runOnce()).toBe(200);
        pageCounts.push(inspect(file, (db) => db.pragma('page_count', { simple: true }) as number));
      }
      // Freed pages are reused: after the first round the database stops growing.
      expect(Math.max(...pageCounts.slice(1))).toBeLessThanOrEqual(pageCounts[0]! + 2);
      expect(rowCount(file)).toBe(0);
    });
  });
});

describe('background sweep of the service', () => {
  it('removes expired rows without being asked', async () => {
    const dir = makeTempDir();
    const clock = createTestClock();
    const config = testConfig({ DATA_DIR: dir, STORAGE_SWEEP_INTERVAL_MS: '20', STORAGE_SWEEP_BATCH: '3' });
    const running = await startService(config, clock.now);
    try {
      const keys = Array.from({ length: 10 }, () => randomKey());
      for (const key of keys) expect((await postJson(`${running.base}/store`, { key, value: 'aa', ttl: 1 })).status).toBe(200);
      const live = randomKey();
      expect((await postJson(`${running.base}/store`, { key: live, value: 'bb', ttl: 100 })).status).toBe(200);
      expect(rowCount(config.sqliteFile)).toBe(11);
      clock.advance(1_000);
      // Invisible at once, before any sweep.
      expect((await getJson(`${running.base}/retrieve/${keys[0]}`)).status).toBe(404);
      await eventually(() => rowCount(config.sqliteFile) === 1);
      expect((await getJson(`${running.base}/retrieve/${live}`)).status).toBe(200);
    } finally {
      await running.close();
      removeDir(dir);
    }
  });
});

describe('write tokens in the SQLite file', () => {
  it('keeps the SHA-256 of the token, never the token', async () => {
    const dir = makeTempDir();
    const config = testConfig({ DATA_DIR: dir });
    const running = await startService(config);
    try {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd');
      const stored = inspect(config.sqliteFile, (db) => db.prepare('SELECT token_hash FROM entries').pluck().get() as Buffer);
      expect(stored.equals(hashWriteToken(token))).toBe(true);
      await running.close();
      // Neither the token's bytes nor its hex are anywhere in the database or its WAL.
      for (const name of readdirSync(dir)) {
        const bytes = readFileSync(join(dir, name));
        expect(bytes.includes(Buffer.from(token, 'hex'))).toBe(false);
        expect(bytes.includes(Buffer.from(token))).toBe(false);
      }
    } finally {
      await running.close();
      removeDir(dir);
    }
  });
});

describe('schema migration of a file from before write tokens', () => {
  // The schema of the versions before write tokens, as they created it.
  const OLD_SCHEMA = `
    CREATE TABLE IF NOT EXISTS entries (
      key BLOB PRIMARY KEY,
      value BLOB NOT NULL,
      expires_at INTEGER
    );
    CREATE INDEX IF NOT EXISTS entries_expires_at ON entries (expires_at) WHERE expires_at IS NOT NULL;
  `;

  it('adds the token column, keeps every value readable and immutable, and lets expired keys be stored again', async () => {
    const dir = makeTempDir();
    const config = testConfig({ DATA_DIR: dir });
    const clock = createTestClock();
    const [live, forever, expired] = [randomKey(), randomKey(), randomKey()];
    const old = new Database(config.sqliteFile);
    old.pragma('journal_mode = WAL');
    old.exec(OLD_SCHEMA);
    const insert = old.prepare('INSERT INTO entries (key, value, expires_at) VALUES (?, ?, ?)');
    insert.run(Buffer.from(live, 'hex'), Buffer.from('aa', 'hex'), clock.now() + 60_000);
    insert.run(Buffer.from(forever, 'hex'), Buffer.from('bb', 'hex'), null);
    insert.run(Buffer.from(expired, 'hex'), Buffer.from('cc', 'hex'), clock.now() - 1);
    old.close();

    let running = await startService(config, clock.now);
    try {
      const columns = inspect(config.sqliteFile, (db) =>
        (db.prepare('PRAGMA table_info(entries)').all() as { name: string }[]).map((c) => c.name),
      );
      expect(columns).toEqual(['key', 'value', 'expires_at', 'token_hash']);
      expect(inspect(config.sqliteFile, (db) => db.pragma('user_version', { simple: true }))).toBe(1);

      expect(await getJson(`${running.base}/retrieve/${live}`)).toEqual({
        status: 200,
        body: { key: live, value: 'aa', expires_at: new Date(clock.now() + 60_000).toISOString(), ttl_remaining: 60 },
      });
      expect((await getJson(`${running.base}/retrieve/${forever}`)).body).toEqual({
        key: forever,
        value: 'bb',
        expires_at: null,
        ttl_remaining: null,
      });
      for (const key of [live, forever]) {
        const del = await deleteJson(`${running.base}/storage/${key}`, randomKey());
        expect(del).toMatchObject({
          status: 403,
          body: { error: expect.stringContaining('value has no write token'), code: 'ACCESS_DENIED' },
        });
        const touch = await touchJson(`${running.base}/storage/touch/${key}`, { ttl: 5 }, randomKey());
        expect(touch).toMatchObject({ status: 403, body: { error: expect.stringContaining('value has no write token') } });
      }
      expect((await getJson(`${running.base}/retrieve/${live}`)).body.ttl_remaining).toBe(60);
      expect((await postJson(`${running.base}/store`, { key: live, value: 'dd' })).status).toBe(409);

      // The expired old row is replaced by a store, which gets a token like any other.
      const token = await storeValue(running.base, expired, 'ee', 30);
      expect((await deleteJson(`${running.base}/${expired}`, token)).status).toBe(200);

      // Opening the migrated file again changes nothing.
      await running.close();
      running = await startService(config, clock.now);
      expect((await getJson(`${running.base}/retrieve/${forever}`)).body.value).toBe('bb');
      expect(rowCount(config.sqliteFile)).toBe(2);
    } finally {
      await running.close();
      removeDir(dir);
    }
  });
});
