import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createSqliteBackend, createSweeper, type StorageBackend } from '../src';
import {
  createTestClock,
  getJson,
  makeTempDir,
  postJson,
  randomKey,
  randomValue,
  removeDir,
  startService,
  testConfig,
} from './support/service';

/** Reads the database file through a second, read-only connection, as an operator would. */
function inspect<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

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

    it('commits stores issued together and answers each of them', async () => {
      const t = Date.now();
      const keys = Array.from({ length: 300 }, () => randomKey());
      const results = await Promise.all([...keys, keys[0]!].map((key) => backend.put(key, 'ab', 60, t)));
      expect(results.filter((r) => r === 'stored')).toHaveLength(300);
      expect(results[300]).toBe('exists');
      expect(rowCount(file)).toBe(300);
    });

    it('finishes pending stores when it closes', async () => {
      const key = randomKey();
      const put = backend.put(key, 'cd', null, Date.now());
      await backend.close();
      await expect(put).resolves.toBe('stored');
      backend = createSqliteBackend({ file });
      expect(await backend.get(key, Date.now())).toBe('cd');
    });
  });

  describe('sweeper', () => {
    it('deletes expired rows in batches and keeps the live ones', async () => {
      const clock = createTestClock();
      await Promise.all(Array.from({ length: 25 }, () => backend.put(randomKey(), 'aa', 10, clock.now())));
      await Promise.all(Array.from({ length: 5 }, () => backend.put(randomKey(), 'bb', 1_000, clock.now())));
      await Promise.all(Array.from({ length: 3 }, () => backend.put(randomKey(), 'cc', null, clock.now())));
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
        await Promise.all(Array.from({ length: 200 }, () => backend.put(randomKey(), randomValue(1_024), 5, clock.now())));
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
      const deadline = Date.now() + 10_000;
      while (rowCount(config.sqliteFile) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(rowCount(config.sqliteFile)).toBe(1);
      expect((await getJson(`${running.base}/retrieve/${live}`)).status).toBe(200);
    } finally {
      await running.close();
      removeDir(dir);
    }
  });
});
