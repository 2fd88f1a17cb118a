import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import type { TweakIndexStore } from '../../src/tweak-index/store';
import { createPostgresIndexStore } from '../../src/tweak-index/store-postgres';
import { createSqliteIndexStore } from '../../src/tweak-index/store-sqlite';
import { startTestPostgres, type TestPostgres } from './support/postgres';
import { bytes, hex, record } from './support/records';

interface Backend {
  name: string;
  make(): TweakIndexStore;
  /** Replaces the index's tables with those of the row-per-transaction layout of earlier versions, one block in them. */
  oldLayout(): Promise<void>;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

/** The tables of the row-per-transaction layout (SQLite's types; BYTEA for PostgreSQL), one block in them. */
const OLD_LAYOUT_SQL = `
CREATE TABLE idx_blocks (height INTEGER PRIMARY KEY, hash BLOB NOT NULL, header BLOB NOT NULL, time INTEGER NOT NULL,
  new_filter BLOB NOT NULL, spent_filter BLOB NOT NULL);
CREATE TABLE idx_txs (height INTEGER NOT NULL, pos INTEGER NOT NULL, txid BLOB NOT NULL, tweak BLOB NOT NULL, PRIMARY KEY (height, pos));
CREATE TABLE idx_outputs (txid BLOB NOT NULL, vout INTEGER NOT NULL, height INTEGER NOT NULL, value INTEGER NOT NULL,
  xonly BLOB NOT NULL, spent_height INTEGER, PRIMARY KEY (txid, vout));
CREATE TABLE idx_spent (height INTEGER NOT NULL, pos INTEGER NOT NULL, txid BLOB NOT NULL, vout INTEGER NOT NULL,
  spender BLOB NOT NULL, PRIMARY KEY (height, pos));
INSERT INTO idx_blocks VALUES (7, '\\x00', '\\x00', 0, '\\x00', '\\x00');
`;

let pg: TestPostgres | undefined;
let dir: string;

const backends: Backend[] = [
  {
    name: 'sqlite',
    make: () => createSqliteIndexStore(join(dir, 'index', 'tweak-index.sqlite')),
    oldLayout: async () => {
      const db = new Database(join(dir, 'index', 'tweak-index.sqlite'));
      db.exec(`DROP TABLE idx_blocks; DROP TABLE idx_spends; ${OLD_LAYOUT_SQL}`);
      db.close();
      await Promise.resolve();
    },
    setUp: async () => {
      dir = mkdtempSync(join(tmpdir(), 'sp-index-'));
      await Promise.resolve();
    },
    tearDown: async () => {
      rmSync(dir, { recursive: true, force: true });
      await Promise.resolve();
    },
  },
  {
    name: 'postgres',
    make: () => createPostgresIndexStore(pg!.url),
    oldLayout: async () => {
      const client = new Client({ connectionString: pg!.url });
      await client.connect();
      try {
        await client.query(`DROP TABLE idx_blocks, idx_spends; ${OLD_LAYOUT_SQL.replaceAll('BLOB', 'BYTEA')}`);
      } finally {
        await client.end();
      }
    },
    setUp: async () => {
      pg = await startTestPostgres();
    },
    tearDown: async () => {
      await pg?.stop();
    },
  },
];

describe.each(backends)('the tweak index store ($name)', (backend) => {
  let store: TweakIndexStore;

  beforeAll(async () => {
    await backend.setUp();
  }, 60_000);
  afterAll(async () => {
    await backend.tearDown();
  }, 60_000);
  beforeEach(async () => {
    store = backend.make();
    await store.open();
    await store.rollback(0);
  });
  afterEach(async () => {
    await store.close();
  });

  it('starts empty', async () => {
    expect(await store.tip()).toBeUndefined();
    expect(await store.firstHeight()).toBeUndefined();
    expect(await store.txs(0, 100)).toEqual([]);
    expect(await store.size()).toMatchObject({ blocks: 0, txs: 0 });
  });

  it('gives back a block as it was stored: header, filters, transactions, outputs and amounts', async () => {
    await store.applyBlock(record(10));
    expect(await store.tip()).toEqual({ height: 10, hash: hex(32, 10) });
    expect(await store.firstHeight()).toBe(10);
    const [block] = await store.blocks(10, 10);
    expect(block).toEqual({
      height: 10,
      hash: hex(32, 10),
      header: bytes(80, 10),
      time: 1_700_000_010,
      newOutputsFilter: bytes(5, 1),
      spentFilter: bytes(1, 0),
    });
    const txs = await store.txs(10, 10);
    expect(txs.map((t) => t.txid)).toEqual([hex(32, 110), hex(32, 210)]);
    expect(txs[0]!.tweak).toStrictEqual(bytes(33, 2));
    expect(txs[0]!.outputs).toStrictEqual([
      { vout: 0, value: 1_000n, xonly: bytes(32, 7), spentHeight: null },
      { vout: 2, value: 2_100_000_000_000_000n, xonly: bytes(32, 8), spentHeight: null },
    ]);
    expect(await store.size()).toMatchObject({ blocks: 1, txs: 2 });
    expect((await store.size()).bytes).toBeGreaterThan(0);
  });

  it('marks outputs spent by a later block, gives each output its spend, and a rollback of that block un-spends them', async () => {
    await store.applyBlock(record(10));
    await store.applyBlock(record(11, [{ txid: hex(32, 110), vout: 2, outHeight: 10 }]));
    expect(await store.spent(10, 11)).toEqual([{ height: 11, txid: hex(32, 110), vout: 2, spender: hex(32, 111), outHeight: 10 }]);
    const spentOutputs = (await store.txs(10, 10))[0]!.outputs.map((o) => o.spentHeight);
    expect(spentOutputs).toEqual([null, 11]);
    expect(await store.spendOf(10, hex(32, 110), 2)).toEqual({ height: 11, spender: hex(32, 111) });
    expect(await store.spendOf(10, hex(32, 110), 0)).toBeUndefined();
    expect(await store.spendOf(9, hex(32, 110), 2)).toBeUndefined();

    await store.rollback(11);
    expect(await store.tip()).toEqual({ height: 10, hash: hex(32, 10) });
    expect(await store.spent(10, 11)).toEqual([]);
    expect(await store.spendOf(10, hex(32, 110), 2)).toBeUndefined();
    expect((await store.txs(10, 11)).flatMap((t) => t.outputs.map((o) => o.spentHeight))).toEqual([null, null, null]);
  });

  it('rolls back a block and everything above it, then takes the new branch', async () => {
    for (const h of [5, 6, 7, 8]) await store.applyBlock(record(h));
    await store.rollback(7);
    expect(await store.tip()).toEqual({ height: 6, hash: hex(32, 6) });
    expect((await store.txs(0, 100)).map((t) => t.height)).toEqual([5, 5, 6, 6]);
    const replacement = { ...record(7), hash: hex(32, 0xee) };
    await store.applyBlock(replacement);
    expect(await store.tip()).toEqual({ height: 7, hash: hex(32, 0xee) });
  });

  it('writes a block all or nothing: a failure half-way leaves the index as it was', async () => {
    await store.applyBlock(record(1));
    // The block's row is written, then its second spend of the same outpoint is refused by the database.
    const twice = { txid: hex(32, 101), vout: 0, outHeight: 1 };
    await expect(store.applyBlock(record(2, [twice, twice]))).rejects.toThrow();
    expect(await store.tip()).toEqual({ height: 1, hash: hex(32, 1) });
    expect(await store.blocks(2, 2)).toEqual([]);
    expect((await store.txs(2, 2)).length).toBe(0);
    expect((await store.txs(1, 1))[0]!.outputs.map((o) => o.spentHeight)).toEqual([null, null]);
    // A field that cannot be stored is refused before anything is written.
    const broken = record(2);
    (broken.txs[1] as { tweak: unknown }).tweak = undefined;
    await expect(store.applyBlock(broken)).rejects.toThrow('tweak: expected 33 bytes');
    expect(await store.tip()).toEqual({ height: 1, hash: hex(32, 1) });
    await expect(store.applyBlock(record(1))).rejects.toThrow();
  });

  it('un-spends on a rollback what the removed blocks spent, outputs of their own blocks included', async () => {
    await store.applyBlock(record(20));
    // Block 21 spends an output of block 20 and one of its own.
    await store.applyBlock(
      record(21, [
        { txid: hex(32, 120), vout: 0, outHeight: 20 },
        { txid: hex(32, 121), vout: 2, outHeight: 21 },
      ]),
    );
    await store.applyBlock(record(22, [{ txid: hex(32, 121), vout: 0, outHeight: 21 }]));
    const spentHeights = async (): Promise<Array<number | null>> =>
      (await store.txs(20, 22)).flatMap((t) => t.outputs.map((o) => o.spentHeight));
    expect(await spentHeights()).toEqual([21, null, null, 22, 21, null, null, null, null]);
    await store.rollback(22);
    expect(await spentHeights()).toEqual([21, null, null, null, 21, null]);
    await store.rollback(21);
    expect(await spentHeights()).toEqual([null, null, null]);
    expect(await store.spent(0, 100)).toEqual([]);
  });

  it('drops the index of the row-per-transaction layout on open, to be built again, once', async () => {
    await store.close();
    await backend.oldLayout();
    store = backend.make();
    expect(await store.open()).toEqual({ rebuilt: true });
    expect(await store.tip()).toBeUndefined();
    await store.applyBlock(record(3));
    await store.close();
    store = backend.make();
    expect(await store.open()).toEqual({ rebuilt: false });
    expect(await store.tip()).toEqual({ height: 3, hash: hex(32, 3) });
  });

  it('keeps the index across a close and a new open', async () => {
    await store.applyBlock(record(3));
    await store.close();
    store = backend.make();
    await store.open();
    expect(await store.tip()).toEqual({ height: 3, hash: hex(32, 3) });
    expect((await store.txs(3, 3)).length).toBe(2);
  });
});

describe('the PostgreSQL index store', () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
  }, 60_000);

  /** idx_blocks' packed columns and how PostgreSQL stores each (attstorage: 'e' external, 'x' extended). */
  async function storage(): Promise<Record<string, string>> {
    const client = new Client({ connectionString: pg.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ attname: string; attstorage: string }>(
        "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'idx_blocks'::regclass AND attname IN ('new_filter', 'spent_filter', 'txs', 'spent')",
      );
      return Object.fromEntries(rows.map((r) => [r.attname, r.attstorage]));
    } finally {
      await client.end();
    }
  }

  it('stores the packed values uncompressed, on a new index and on one made before with compression', async () => {
    const external = { new_filter: 'e', spent_filter: 'e', txs: 'e', spent: 'e' };
    let store = createPostgresIndexStore(pg.url);
    await store.open();
    await store.applyBlock(record(3));
    await store.close();
    expect(await storage()).toEqual(external);
    // an index of the same layout made by an earlier version: PostgreSQL's default, compressed
    const client = new Client({ connectionString: pg.url });
    await client.connect();
    await client.query('ALTER TABLE idx_blocks ALTER COLUMN txs SET STORAGE EXTENDED, ALTER COLUMN spent SET STORAGE EXTENDED');
    await client.end();
    expect(await storage()).toMatchObject({ txs: 'x', spent: 'x' });
    store = createPostgresIndexStore(pg.url);
    expect(await store.open()).toEqual({ rebuilt: false });
    expect(await storage()).toEqual(external);
    expect(await store.tip()).toEqual({ height: 3, hash: hex(32, 3) });
    await store.close();
  });
});

describe('the PostgreSQL index store with no server', () => {
  it('rejects open with the connection error and keeps no pool behind', async () => {
    const store = createPostgresIndexStore('postgres://nobody@127.0.0.1:1/none');
    await expect(store.open()).rejects.toThrow();
    await expect(store.tip()).rejects.toThrow('the tweak index store is not open');
    await store.close();
  });
});
