import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '@repo/errors';
import {
  createStore,
  openStore,
  openStoreAt,
  REORG_MEMORY,
  SCHEMA_VERSION,
  type NewPayment,
  type Store,
  type StoreLocation,
} from '../src/store';
import { startTestPostgres, type TestPostgres } from './tweak-index/support/postgres';

function payment(txid: string, vout: number, amountSats = 1000n): NewPayment {
  return {
    txid,
    vout,
    address: `tsp1address${vout}`,
    labelM: vout === 0 ? null : vout,
    amountSats,
    outputKey: 'aa'.repeat(32),
    tweak: 'bb'.repeat(32),
  };
}

/** One backend of the contract: each test gets a store of its own (a SQLite file in a new folder, or a new wallet in the PostgreSQL database). */
interface Backend {
  name: 'sqlite' | 'postgres';
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** Where the test's store lives (a new one for each test). */
  location(): StoreLocation;
}

let pg: TestPostgres | undefined;
let dir: string;
let wallet: string;
let tests = 0;

const backends: Backend[] = [
  {
    name: 'sqlite',
    setUp: () => Promise.resolve(),
    tearDown: () => Promise.resolve(),
    location: () => ({ sqliteFile: join(dir, 'data', 'db.sqlite') }),
  },
  {
    name: 'postgres',
    setUp: async () => {
      pg = await startTestPostgres();
    },
    tearDown: async () => {
      await pg?.stop();
    },
    location: () => ({ sqliteFile: join(dir, 'data', 'db.sqlite'), databaseUrl: pg!.url, wallet }),
  },
];

describe.each(backends)('the service store ($name)', (backend) => {
  const open = () => openStoreAt(backend.location());
  beforeAll(() => backend.setUp(), 60_000);
  afterAll(() => backend.tearDown(), 60_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-store-'));
    wallet = `tsp1wallet${process.pid}x${++tests}`;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  describe('operations', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('hands out label indexes from 1 and returns the existing label', async () => {
      const a = await store.createLabel('order-1', 5n, (m) => `addr-${m}`);
      const b = await store.createLabel('order-2', 6n, (m) => `addr-${m}`);
      expect([a.m, b.m]).toEqual([1, 2]);
      expect(await store.createLabel('order-1', 9n, (m) => `other-${m}`)).toEqual(a);
      expect(await store.findLabel('order-2')).toEqual(b);
      expect((await store.labels()).map((l) => l.label)).toEqual(['order-1', 'order-2']);
    });

    it('turns a pending payment into a confirmed one keeping its first sighting time', async () => {
      const [pending] = await store.addPending([payment('11'.repeat(32), 1)]);
      expect(pending?.status).toBe('pending');
      expect(await store.addPending([payment('11'.repeat(32), 1)])).toEqual([]);
      await store.initProgress(10, 'ab'.repeat(32));
      const [confirmed] = (await store.applyBlock({ height: 10, hash: 'cd'.repeat(32) }, [payment('11'.repeat(32), 1)])).payments;
      expect(confirmed).toMatchObject({
        id: `${'11'.repeat(32)}:1`,
        status: 'confirmed',
        blockHeight: 10,
        createdAt: pending?.createdAt,
        amountSats: 1000n,
      });
      expect(await store.pendingTxids()).toEqual([]);
    });

    it('rolls back the payments and hashes of blocks above a height', async () => {
      await store.initProgress(5, '00'.repeat(32));
      await store.applyBlock({ height: 5, hash: '05'.repeat(32) }, [payment('aa'.repeat(32), 0)]);
      await store.applyBlock({ height: 6, hash: '06'.repeat(32) }, [payment('bb'.repeat(32), 2), payment('bb'.repeat(32), 3)]);
      await store.addPending([payment('cc'.repeat(32), 0)]);
      const { removed, unspent } = await store.rollbackAbove(5);
      expect(removed.map((p) => [p.id, p.blockHeight, p.blockHash])).toEqual([
        [`${'bb'.repeat(32)}:2`, 6, '06'.repeat(32)],
        [`${'bb'.repeat(32)}:3`, 6, '06'.repeat(32)],
      ]);
      expect(unspent).toBe(0);
      expect(store.progress()).toEqual({ startHeight: 5, scannedHeight: 5 });
      expect(await store.blockHash(6)).toBeUndefined();
      expect(await store.blockHash(4)).toBe('00'.repeat(32));
      expect(await store.countPayments()).toBe(2);
    });

    it('keeps the first sighting of a payment a reorg removed when it comes back, for the last REORG_MEMORY of them', async () => {
      const tick = () => new Promise((resolve) => setTimeout(resolve, 5)); // createdAt has milliseconds
      const txid = (i: number) => i.toString(16).padStart(64, '0');
      await store.initProgress(5, '00'.repeat(32));
      const [first] = (await store.applyBlock({ height: 6, hash: '06'.repeat(32) }, [payment(txid(0), 0)])).payments;
      await store.rollbackAbove(5);
      await tick();
      // Mined again: the same first sighting.
      const [again] = (await store.applyBlock({ height: 6, hash: '16'.repeat(32) }, [payment(txid(0), 0)])).payments;
      expect(again?.createdAt).toBe(first?.createdAt);
      await store.rollbackAbove(5);

      // REORG_MEMORY more removed after it: the oldest sighting is forgotten, the others kept.
      const others = Array.from({ length: REORG_MEMORY }, (_, i) => payment(txid(i + 1), 0));
      const stored = (await store.applyBlock({ height: 6, hash: '26'.repeat(32) }, others)).payments;
      expect(stored).toHaveLength(REORG_MEMORY);
      expect((await store.rollbackAbove(5)).removed).toHaveLength(REORG_MEMORY);
      await tick();
      const back = (
        await store.applyBlock({ height: 6, hash: '36'.repeat(32) }, [
          payment(txid(0), 0),
          payment(txid(1), 0),
          payment(txid(REORG_MEMORY), 0),
        ])
      ).payments;
      expect(back[0]!.createdAt > first!.createdAt).toBe(true);
      expect(back.slice(1).map((p) => p.createdAt)).toEqual([stored[0]?.createdAt, stored[REORG_MEMORY - 1]?.createdAt]);
    });

    it('lists pending payments first, then the newest block first, with limit and offset', async () => {
      await store.initProgress(1, undefined);
      await store.applyBlock({ height: 1, hash: '01'.repeat(32) }, [payment('01'.repeat(32), 0)]);
      await store.applyBlock({ height: 2, hash: '02'.repeat(32) }, [payment('02'.repeat(32), 0)]);
      await store.addPending([payment('03'.repeat(32), 0)]);
      expect((await store.listPayments(10, 0)).map((p) => p.blockHeight)).toEqual([null, 2, 1]);
      expect((await store.listPayments(1, 1)).map((p) => p.blockHeight)).toEqual([2]);
      expect(await store.removePending(['03'.repeat(32)])).toBe(1);
      expect(await store.countPayments()).toBe(2);
    });

    it('keeps everything across a reopen', async () => {
      await store.initProgress(3, '02'.repeat(32));
      await store.applyBlock({ height: 3, hash: '03'.repeat(32) }, [payment('03'.repeat(32), 4, 2_100_000_000_000_000n)]);
      await store.close();
      store = await open();
      expect(store.progress()).toEqual({ startHeight: 3, scannedHeight: 3 });
      expect((await store.getPayment(`${'03'.repeat(32)}:4`))?.amountSats).toBe(2_100_000_000_000_000n);
    });

    it('refuses a database made for other keys or another network', async () => {
      await store.assertIdentity({ network: 'signet', scanPub: 'a', spendPub: 'b' });
      await expect(store.assertIdentity({ network: 'signet', scanPub: 'a', spendPub: 'b' })).resolves.toBeUndefined();
      await expect(store.assertIdentity({ network: 'signet', scanPub: 'x', spendPub: 'b' })).rejects.toThrow('key set');
      await expect(store.assertIdentity({ network: 'mainnet', scanPub: 'a', spendPub: 'b' })).rejects.toThrow('network');
      // kept across a reopen
      await store.close();
      store = await open();
      await expect(store.assertIdentity({ network: 'regtest', scanPub: 'a', spendPub: 'b' })).rejects.toThrow(
        backend.name === 'sqlite' ? 'DATA_DIR' : 'DATABASE_URL',
      );
    });

    it('records spends from the mempool and from blocks, and undoes those of blocks rolled back', async () => {
      const a = `${'a1'.repeat(32)}:0`;
      const b = `${'b1'.repeat(32)}:1`;
      await store.initProgress(1, undefined);
      await store.applyBlock({ height: 1, hash: '01'.repeat(32) }, [
        payment('a1'.repeat(32), 0, 5000n),
        payment('b1'.repeat(32), 1, 7000n),
      ]);
      expect(await store.balance()).toEqual({ confirmed: 12_000n, pending: 0n, spentPending: 0n, utxoCount: 2 });
      // A mempool spend of a (and of an outpoint that is not ours).
      const marked = await store.markSpentPending([
        { id: a, spentTxid: 'cc'.repeat(32) },
        { id: `${'ff'.repeat(32)}:0`, spentTxid: 'cc'.repeat(32) },
      ]);
      expect(marked.map((p) => [p.id, p.spentTxid, p.spentHeight])).toEqual([[a, 'cc'.repeat(32), null]]);
      expect(await store.markSpentPending([{ id: a, spentTxid: 'cc'.repeat(32) }])).toEqual([]);
      expect(await store.pendingSpendTxids()).toEqual(['cc'.repeat(32)]);
      expect(await store.balance()).toEqual({ confirmed: 7000n, pending: 0n, spentPending: 5000n, utxoCount: 1 });
      // Mined at height 2 with a spend of b in the same block.
      const { spent } = await store.applyBlock(
        { height: 2, hash: '02'.repeat(32) },
        [],
        [
          { id: a, spentTxid: 'cc'.repeat(32) },
          { id: b, spentTxid: 'dd'.repeat(32) },
          { id: `${'ee'.repeat(32)}:9`, spentTxid: 'dd'.repeat(32) },
        ],
      );
      expect(spent.map((p) => [p.id, p.spentTxid, p.spentHeight])).toEqual([
        [a, 'cc'.repeat(32), 2],
        [b, 'dd'.repeat(32), 2],
      ]);
      expect(await store.pendingSpendTxids()).toEqual([]);
      expect(await store.balance()).toEqual({ confirmed: 0n, pending: 0n, spentPending: 0n, utxoCount: 0 });
      expect((await store.listPayments(10, 0, { spent: true })).length).toBe(2);
      expect(await store.countPayments({ spent: false })).toBe(0);
      // Block 2 leaves the chain: both unspent again, the payments of block 1 kept.
      expect(await store.rollbackAbove(1)).toEqual({ removed: [], unspent: 2 });
      expect(await store.getPayment(a)).toMatchObject({ spentTxid: null, spentHeight: null, status: 'confirmed' });
      expect(await store.balance()).toEqual({ confirmed: 12_000n, pending: 0n, spentPending: 0n, utxoCount: 2 });
      // The spend is back in the mempool, then replaced (leaves it unconfirmed): unspent.
      await store.markSpentPending([{ id: a, spentTxid: 'cc'.repeat(32) }]);
      expect(await store.clearPendingSpends(['cc'.repeat(32)])).toBe(1);
      expect((await store.getPayment(a))?.spentTxid).toBeNull();
    });

    it('filters payments by status, spent and label, and totals a label', async () => {
      await store.initProgress(1, undefined);
      await store.applyBlock({ height: 1, hash: '01'.repeat(32) }, [payment('01'.repeat(32), 1, 100n), payment('01'.repeat(32), 2, 200n)]);
      await store.addPending([payment('02'.repeat(32), 1, 50n)]);
      expect(await store.countPayments({ status: 'pending' })).toBe(1);
      expect(await store.countPayments({ status: 'confirmed' })).toBe(2);
      expect((await store.listPayments(10, 0, { labelM: 1 })).map((p) => p.id)).toEqual([`${'02'.repeat(32)}:1`, `${'01'.repeat(32)}:1`]);
      expect(await store.countPayments({ labelM: 1, status: 'confirmed', spent: false })).toBe(1);
      expect(await store.labelTotals(1)).toEqual({
        received: 100n,
        pending: 50n,
        payments: [`${'02'.repeat(32)}:1`, `${'01'.repeat(32)}:1`],
      });
      expect(await store.labelTotals(7)).toEqual({ received: 0n, pending: 0n, payments: [] });
    });

    it('commits what a transaction wrote through tx when its work resolves, and nothing when it throws', async () => {
      await store.initProgress(1, '00'.repeat(32));
      const id = `${'11'.repeat(32)}:1`;
      let outside: Promise<number> | undefined;
      await expect(
        store.transaction(async (tx) => {
          await tx.applyBlock({ height: 1, hash: '01'.repeat(32) }, [payment('11'.repeat(32), 1)], []);
          await tx.addPending([payment('22'.repeat(32), 0)]);
          await tx.createLabel('inside', 5n, (m) => `addr-${m}`);
          // inside, the transaction sees its own writes
          expect(tx.progress().scannedHeight).toBe(1);
          expect(await tx.getPayment(id)).toMatchObject({ status: 'confirmed', blockHeight: 1 });
          expect(await tx.countPayments()).toBe(2);
          // outside, nothing of it (started, not awaited: SQLite's waits for the end, PostgreSQL's runs beside it)
          outside = store.countPayments();
          throw new Error('a consumer failed');
        }),
      ).rejects.toThrow('a consumer failed');
      expect(await outside).toBe(0);
      expect(store.progress()).toEqual({ startHeight: 1, scannedHeight: 0 });
      expect(await store.countPayments()).toBe(0);
      expect(await store.blockHash(1)).toBeUndefined();
      expect(await store.findLabel('inside')).toBeUndefined();
      expect(await store.pendingTxids()).toEqual([]);

      const done = await store.transaction(async (tx) => {
        await tx.applyBlock({ height: 1, hash: '01'.repeat(32) }, [payment('11'.repeat(32), 1)], []);
        return 'committed';
      });
      expect(done).toBe('committed');
      expect(store.progress()).toEqual({ startHeight: 1, scannedHeight: 1 });
      expect(await store.getPayment(id)).toMatchObject({ status: 'confirmed', blockHeight: 1, amountSats: 1000n });
      expect(await store.blockHash(1)).toBe('01'.repeat(32));
    });

    it('keeps amounts exact up to 21 million BTC and timestamps as ISO strings', async () => {
      await store.initProgress(1, undefined);
      const [p] = (await store.applyBlock({ height: 1, hash: '01'.repeat(32) }, [payment('31'.repeat(32), 0, 2_099_999_997_690_000n)]))
        .payments;
      expect(p?.amountSats).toBe(2_099_999_997_690_000n);
      expect(p?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const label = await store.createLabel('big', 2_100_000_000_000_000n, (m) => `addr-${m}`);
      expect((await store.findLabel('big'))?.amountSats).toBe(2_100_000_000_000_000n);
      expect(label.createdAt).toMatch(/Z$/);
      expect(await store.balance()).toEqual({ confirmed: 2_099_999_997_690_000n, pending: 0n, spentPending: 0n, utxoCount: 1 });
      expect(Array.from(await store.labelIndexes())).toEqual([1]);
      expect(await store.countLabels()).toBe(1);
      expect((await store.listLabels(10, 0)).map((l) => l.label)).toEqual(['big']);
      expect((await store.labelByIndex(1))?.label).toBe('big');
    });
  });

  describe('createStore (deferred open)', () => {
    it('touches nothing until open(): progress is empty, other calls reject with 503; close() is idempotent', async () => {
      const store = createStore(backend.location());
      expect(store.kind).toBe(backend.name);
      expect(existsSync(join(dir, 'data'))).toBe(false);
      expect(store.isOpen).toBe(false);
      expect(store.progress()).toEqual({ startHeight: undefined, scannedHeight: undefined });
      const refused: unknown = await store.countLabels().catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'the service is starting' });
      await expect(store.transaction(() => Promise.resolve())).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await store.open();
      await store.open();
      expect(store.isOpen).toBe(true);
      // the SQLite file is created by open(); with DATABASE_URL nothing is written under DATA_DIR
      expect(existsSync(join(dir, 'data'))).toBe(backend.name === 'sqlite');
      await store.initProgress(5, 'ab'.repeat(32));
      expect(store.progress()).toEqual({ startHeight: 5, scannedHeight: 4 });
      expect(await store.blockHash(4)).toBe('ab'.repeat(32));
      await store.close();
      await store.close();
      expect(store.isOpen).toBe(false);
      expect(store.progress()).toEqual({ startHeight: undefined, scannedHeight: undefined });
      await expect(store.blockHash(4)).rejects.toThrow('the service is stopping');
      await expect(store.open()).rejects.toThrow(/was closed/);
      // what was written is there for the next start
      const again = await open();
      expect(again.progress()).toEqual({ startHeight: 5, scannedHeight: 4 });
      await again.close();
    });

    it('close() before open() creates nothing', async () => {
      const store = createStore(backend.location());
      await store.close();
      expect(existsSync(join(dir, 'data'))).toBe(false);
      await expect(store.open()).rejects.toThrow(/was closed/);
    });
  });
});

describe('the service store in a PostgreSQL database shared by several servers', () => {
  let shared: TestPostgres;
  beforeAll(async () => {
    shared = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await shared.stop();
  }, 60_000);
  const at = (walletOf: string) =>
    openStoreAt({ sqliteFile: join(tmpdir(), 'never-written.sqlite'), databaseUrl: shared.url, wallet: walletOf });

  it('keeps each identity to its own labels, payments, progress and blocks', async () => {
    const [a, b] = await Promise.all([at('tsp1alice'), at('tsp1bob')]);
    try {
      await a.assertIdentity({ network: 'regtest', scanPub: 'a1', spendPub: 'a2' });
      await b.assertIdentity({ network: 'regtest', scanPub: 'b1', spendPub: 'b2' });
      await a.initProgress(10, '09'.repeat(32));
      await a.applyBlock({ height: 10, hash: '10'.repeat(32) }, [payment('a0'.repeat(32), 0, 5_000n)]);
      await a.addPending([payment('a1'.repeat(32), 0, 7_000n)]);
      await a.createLabel('order-1', 1n, (m) => `alice-${m}`);
      expect(b.progress()).toEqual({ startHeight: undefined, scannedHeight: undefined });
      expect(await b.countPayments()).toBe(0);
      expect(await b.listPayments(10, 0)).toEqual([]);
      expect(await b.balance()).toEqual({ confirmed: 0n, pending: 0n, spentPending: 0n, utxoCount: 0 });
      expect(await b.pendingTxids()).toEqual([]);
      expect(await b.blockHash(10)).toBeUndefined();
      expect(await b.findLabel('order-1')).toBeUndefined();
      // the same payment (a transaction paying both) and the same label text, each its own row
      await b.initProgress(20, '19'.repeat(32));
      await b.applyBlock({ height: 20, hash: '20'.repeat(32) }, [payment('a0'.repeat(32), 0, 9_000n)]);
      expect((await b.createLabel('order-1', 2n, (m) => `bob-${m}`)).m).toBe(1);
      expect(await b.rollbackAbove(19)).toMatchObject({ unspent: 0 });
      expect(await a.getPayment(`${'a0'.repeat(32)}:0`)).toMatchObject({ amountSats: 5_000n, blockHeight: 10 });
      expect(await a.balance()).toEqual({ confirmed: 5_000n, pending: 7_000n, spentPending: 0n, utxoCount: 2 });
      expect(a.progress()).toEqual({ startHeight: 10, scannedHeight: 10 });
      expect((await a.findLabel('order-1'))?.address).toBe('alice-1');
      // a rollback of one never touches the other's
      await a.rollbackAbove(9);
      expect(await b.countPayments()).toBe(0);
      expect(await b.blockHash(19)).toBe('19'.repeat(32));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    // a server opened again on the same wallet finds its own data, and refuses another network for it
    const again = await at('tsp1alice');
    try {
      expect(again.progress()).toEqual({ startHeight: 10, scannedHeight: 9 });
      expect(await again.countPayments()).toBe(1);
      await expect(again.assertIdentity({ network: 'regtest', scanPub: 'a1', spendPub: 'a2' })).resolves.toBeUndefined();
      await expect(again.assertIdentity({ network: 'signet', scanPub: 'a1', spendPub: 'a2' })).rejects.toThrow('network (SP_NETWORK)');
    } finally {
      await again.close();
    }
  });

  it('keeps its tables apart from the tweak index and hands out labels one at a time under concurrency', async () => {
    const store = await at('tsp1carol');
    try {
      const made = await Promise.all(Array.from({ length: 8 }, (_, i) => store.createLabel(`order-${i}`, 1n, (m) => `carol-${m}`)));
      expect(made.map((l) => l.m).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const { Client } = await import('pg');
      const client = new Client({ connectionString: shared.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ tablename: string }>(
          "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
        );
        expect(rows.map((r) => r.tablename)).toEqual(['sp_blocks', 'sp_labels', 'sp_meta', 'sp_payments']);
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
    }
  });
});

describe('the SQLite store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-store-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a database of the first schema (no spend columns), keeping its payments', async () => {
    const path = join(dir, 'old.sqlite');
    // The schema as the first release wrote it, with one confirmed payment.
    const old = new Database(path);
    old.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE labels (m INTEGER PRIMARY KEY CHECK (m >= 1), label TEXT NOT NULL UNIQUE, address TEXT NOT NULL, amount_sats INTEGER NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE blocks (height INTEGER PRIMARY KEY, hash TEXT NOT NULL);
      CREATE TABLE payments (id TEXT PRIMARY KEY, txid TEXT NOT NULL, vout INTEGER NOT NULL, address TEXT NOT NULL, label_m INTEGER,
        amount_sats INTEGER NOT NULL, block_height INTEGER, block_hash TEXT,
        status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed')), created_at TEXT NOT NULL, output_key TEXT NOT NULL, tweak TEXT NOT NULL);
      CREATE INDEX payments_by_height ON payments (block_height);
      CREATE INDEX payments_by_status ON payments (status, txid);
      INSERT INTO meta VALUES ('start_height', '7'), ('scanned_height', '7');
      INSERT INTO blocks VALUES (7, '${'07'.repeat(32)}');
      INSERT INTO payments VALUES ('${'77'.repeat(32)}:0', '${'77'.repeat(32)}', 0, 'tsp1old', NULL, 4242, 7, '${'07'.repeat(32)}',
        'confirmed', '2026-01-01T00:00:00.000Z', '${'aa'.repeat(32)}', '${'bb'.repeat(32)}');
    `);
    expect(old.pragma('user_version', { simple: true })).toBe(0);
    old.close();
    let store = openStore(path);
    const id = `${'77'.repeat(32)}:0`;
    expect(await store.getPayment(id)).toMatchObject({ amountSats: 4242n, blockHeight: 7, spentTxid: null, spentHeight: null });
    expect(store.progress()).toEqual({ startHeight: 7, scannedHeight: 7 });
    expect(await store.balance()).toEqual({ confirmed: 4242n, pending: 0n, spentPending: 0n, utxoCount: 1 });
    await store.applyBlock({ height: 8, hash: '08'.repeat(32) }, [], [{ id, spentTxid: '88'.repeat(32) }]);
    expect(await store.getPayment(id)).toMatchObject({ spentTxid: '88'.repeat(32), spentHeight: 8 });
    await store.close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    check.close();
    // Opened again: no second migration.
    store = openStore(path);
    expect((await store.getPayment(id))?.spentHeight).toBe(8);
    await store.close();
  });

  it('creates DATA_DIR private and the file 0600, and narrows a file left readable by others', async () => {
    const path = join(dir, 'data', 'db.sqlite');
    const store = createStore(path);
    await store.open();
    expect(statSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await store.close();
    chmodSync(path, 0o644);
    const again = openStore(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await again.close();
  });
});
