import Database from 'better-sqlite3';
import { openDatabaseFile, type Logger } from '@repo/service';
import type { LabelRecord, NewPayment, PaymentFilter, PaymentRecord, PaymentStatus, SpendSeen, Store, StoreOperations } from './store';
import {
  createFirstSeen,
  identityMismatch,
  INSERT_COLUMNS,
  ORDER,
  PAYMENT_COLUMNS,
  paymentId,
  rowToLabel,
  rowToPayment,
  totalsOf,
  type LabelRow,
  type PaymentRow,
} from './store-rows';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
  m INTEGER PRIMARY KEY CHECK (m >= 1),
  label TEXT NOT NULL UNIQUE,
  address TEXT NOT NULL,
  amount_sats INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS blocks (
  height INTEGER PRIMARY KEY,
  hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS payments (
  id TEXT PRIMARY KEY,
  txid TEXT NOT NULL,
  vout INTEGER NOT NULL,
  address TEXT NOT NULL,
  label_m INTEGER,
  amount_sats INTEGER NOT NULL,
  block_height INTEGER,
  block_hash TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed')),
  created_at TEXT NOT NULL,
  output_key TEXT NOT NULL,
  tweak TEXT NOT NULL,
  spent_txid TEXT,
  spent_height INTEGER
);
CREATE INDEX IF NOT EXISTS payments_by_height ON payments (block_height);
CREATE INDEX IF NOT EXISTS payments_by_status ON payments (status, txid);
`;

/** Indexes on the columns added by schema version 2 (created after the migration adds them). */
const SCHEMA_V2_INDEXES = `
CREATE INDEX IF NOT EXISTS payments_by_spent_height ON payments (spent_height);
CREATE INDEX IF NOT EXISTS payments_by_spent_txid ON payments (spent_txid);
CREATE INDEX IF NOT EXISTS payments_by_label ON payments (label_m);
`;

/** The schema version written in SQLite's user_version: 2 adds spent_txid and spent_height. */
export const SCHEMA_VERSION = 2;

/**
 * Brings a database of an earlier version to {@link SCHEMA_VERSION} in one transaction:
 * version 1 (no user_version) lacks spent_txid and spent_height, added as NULL (unspent:
 * spends are noticed from the blocks scanned after the upgrade).
 */
function migrate(db: Database.Database): void {
  const version = Number(db.pragma('user_version', { simple: true }));
  if (version >= SCHEMA_VERSION) return;
  db.transaction(() => {
    const columns = new Set((db.prepare('PRAGMA table_info(payments)').all() as { name: string }[]).map((c) => c.name));
    if (!columns.has('spent_txid')) db.exec('ALTER TABLE payments ADD COLUMN spent_txid TEXT');
    if (!columns.has('spent_height')) db.exec('ALTER TABLE payments ADD COLUMN spent_height INTEGER');
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  })();
}

/** The WHERE clause of a payment filter and its parameters. */
function where(filter: PaymentFilter | undefined): { sql: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  if (filter?.status !== undefined) {
    clauses.push('status = ?');
    params.push(filter.status);
  }
  if (filter?.spent !== undefined) clauses.push(filter.spent ? 'spent_txid IS NOT NULL' : 'spent_txid IS NULL');
  if (filter?.labelM !== undefined) {
    clauses.push('label_m = ?');
    params.push(filter.labelM);
  }
  return { sql: clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`, params };
}

/** Every statement of the store, prepared once. */
function prepareStatements(db: Database.Database) {
  const insertColumns = INSERT_COLUMNS;
  const paymentColumns = PAYMENT_COLUMNS;
  const order = ORDER;
  const getMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
  const setMeta = db.prepare<[string, string]>(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );

  const findLabel = db.prepare<[string], LabelRow>('SELECT m, label, address, amount_sats, created_at FROM labels WHERE label = ?');
  const labelByIndex = db.prepare<[number], LabelRow>('SELECT m, label, address, amount_sats, created_at FROM labels WHERE m = ?');
  const allLabels = db.prepare<[], LabelRow>('SELECT m, label, address, amount_sats, created_at FROM labels ORDER BY m');
  const maxLabel = db.prepare<[], { m: bigint | null }>('SELECT MAX(m) AS m FROM labels');
  const labelIndexes = db.prepare<[], { m: bigint }>('SELECT m FROM labels ORDER BY m');
  const insertLabel = db.prepare('INSERT INTO labels (m, label, address, amount_sats, created_at) VALUES (?, ?, ?, ?, ?)');

  const getPayment = db.prepare<[string], PaymentRow>(`SELECT ${paymentColumns} FROM payments WHERE id = ?`);
  const allLabelsPaged = db.prepare<[number, number], LabelRow>(
    'SELECT m, label, address, amount_sats, created_at FROM labels ORDER BY m LIMIT ? OFFSET ?',
  );
  const countLabels = db.prepare<[], { n: bigint }>('SELECT COUNT(*) AS n FROM labels');
  const labelPayments = db.prepare<[number], { id: string; status: PaymentStatus; amount_sats: bigint }>(
    `SELECT id, status, amount_sats FROM payments WHERE label_m = ? ${order}`,
  );
  const balance = db.prepare<[], { confirmed: bigint | null; pending: bigint | null; spent_pending: bigint | null; utxos: bigint }>(
    `SELECT
       SUM(CASE WHEN spent_txid IS NULL AND status = 'confirmed' THEN amount_sats ELSE 0 END) AS confirmed,
       SUM(CASE WHEN spent_txid IS NULL AND status = 'pending' THEN amount_sats ELSE 0 END) AS pending,
       SUM(CASE WHEN spent_txid IS NOT NULL AND spent_height IS NULL THEN amount_sats ELSE 0 END) AS spent_pending,
       SUM(CASE WHEN spent_txid IS NULL THEN 1 ELSE 0 END) AS utxos
     FROM payments`,
  );
  const spendConfirmed = db.prepare(
    `UPDATE payments SET spent_txid = @spent_txid, spent_height = @height WHERE id = @id AND (spent_height IS NULL OR spent_txid IS NOT @spent_txid)
     RETURNING ${paymentColumns}`,
  );
  const spendPending = db.prepare(
    `UPDATE payments SET spent_txid = @spent_txid WHERE id = @id AND spent_txid IS NULL RETURNING ${paymentColumns}`,
  );
  const pendingSpendTxids = db.prepare<[], { spent_txid: string }>(
    'SELECT DISTINCT spent_txid FROM payments WHERE spent_txid IS NOT NULL AND spent_height IS NULL',
  );
  const clearPendingSpend = db.prepare<[string]>('UPDATE payments SET spent_txid = NULL WHERE spent_txid = ? AND spent_height IS NULL');
  const unspendAbove = db.prepare<[number]>('UPDATE payments SET spent_txid = NULL, spent_height = NULL WHERE spent_height > ?');
  const paymentsAbove = db.prepare<[number], PaymentRow>(`SELECT ${paymentColumns} FROM payments WHERE block_height > ? ${order}`);
  const upsertConfirmed = db.prepare(
    `INSERT INTO payments (${insertColumns}) VALUES (@id, @txid, @vout, @address, @label_m, @amount_sats, @block_height, @block_hash, 'confirmed', @created_at, @output_key, @tweak)
     ON CONFLICT (id) DO UPDATE SET block_height = excluded.block_height, block_hash = excluded.block_hash, status = 'confirmed'
     RETURNING ${paymentColumns}`,
  );
  const insertPending = db.prepare(
    `INSERT INTO payments (${insertColumns}) VALUES (@id, @txid, @vout, @address, @label_m, @amount_sats, NULL, NULL, 'pending', @created_at, @output_key, @tweak)
     ON CONFLICT (id) DO NOTHING RETURNING ${paymentColumns}`,
  );
  const pendingTxids = db.prepare<[], { txid: string }>("SELECT DISTINCT txid FROM payments WHERE status = 'pending'");
  const deletePending = db.prepare<[string]>("DELETE FROM payments WHERE status = 'pending' AND txid = ?");
  const insertBlock = db.prepare<[number, string]>('INSERT OR REPLACE INTO blocks (height, hash) VALUES (?, ?)');
  const getBlock = db.prepare<[number], { hash: string }>('SELECT hash FROM blocks WHERE height = ?');
  const deleteBlocksAbove = db.prepare<[number]>('DELETE FROM blocks WHERE height > ?');
  const deletePaymentsAbove = db.prepare<[number]>('DELETE FROM payments WHERE block_height > ?');

  return {
    getMeta,
    setMeta,
    findLabel,
    labelByIndex,
    allLabels,
    maxLabel,
    labelIndexes,
    insertLabel,
    getPayment,
    allLabelsPaged,
    countLabels,
    labelPayments,
    balance,
    spendConfirmed,
    spendPending,
    pendingSpendTxids,
    clearPendingSpend,
    unspendAbove,
    paymentsAbove,
    upsertConfirmed,
    insertPending,
    pendingTxids,
    deletePending,
    insertBlock,
    getBlock,
    deleteBlocksAbove,
    deletePaymentsAbove,
  };
}

/** The prepared statements of {@link prepareStatements}. */
type Statements = ReturnType<typeof prepareStatements>;

/** The store's reads: one statement each, nothing written (synchronous). */
function readMethods(db: Database.Database, q: Statements) {
  const optionalInt = (key: string) => {
    const value = q.getMeta.get(key)?.value;
    return value === undefined ? undefined : Number(value);
  };
  return {
    findLabel(label: string) {
      const row = q.findLabel.get(label);
      return row === undefined ? undefined : rowToLabel(row);
    },
    labels: () => q.allLabels.all().map(rowToLabel),
    labelIndexes() {
      const out = new Uint32Array(Number(q.countLabels.get()?.n ?? 0n));
      let i = 0;
      for (const row of q.labelIndexes.iterate()) if (i < out.length) out[i++] = Number(row.m);
      return out.subarray(0, i);
    },
    countLabels: () => Number(q.countLabels.get()?.n ?? 0n),
    labelByIndex(m: number) {
      const row = q.labelByIndex.get(m);
      return row === undefined ? undefined : rowToLabel(row);
    },
    listPayments(limit: number, offset: number, filter?: PaymentFilter) {
      const w = where(filter);
      return db
        .prepare(`SELECT ${PAYMENT_COLUMNS} FROM payments ${w.sql} ${ORDER} LIMIT ? OFFSET ?`)
        .all(...w.params, limit, offset)
        .map(rowToPayment);
    },
    countPayments(filter?: PaymentFilter) {
      const w = where(filter);
      const row = db.prepare(`SELECT COUNT(*) AS n FROM payments ${w.sql}`).get(...w.params) as { n: bigint } | undefined;
      return Number(row?.n ?? 0n);
    },
    listLabels: (limit: number, offset: number) => q.allLabelsPaged.all(limit, offset).map(rowToLabel),
    labelTotals: (m: number) => totalsOf(q.labelPayments.all(m)),
    balance() {
      const row = q.balance.get();
      return {
        confirmed: BigInt(row?.confirmed ?? 0n),
        pending: BigInt(row?.pending ?? 0n),
        spentPending: BigInt(row?.spent_pending ?? 0n),
        utxoCount: Number(row?.utxos ?? 0n),
      };
    },
    getPayment(id: string) {
      const row = q.getPayment.get(id);
      return row === undefined ? undefined : rowToPayment(row);
    },
    progress: () => ({ startHeight: optionalInt('start_height'), scannedHeight: optionalInt('scanned_height') }),
    blockHash: (height: number) => q.getBlock.get(height)?.hash,
    pendingSpendTxids: () => q.pendingSpendTxids.all().map((row) => row.spent_txid),
    pendingTxids: () => q.pendingTxids.all().map((row) => row.txid),
  };
}

/** The store's writes, each one transaction (a savepoint inside an open one), synchronous. */
function writeMethods(db: Database.Database, q: Statements) {
  const firstSeen = createFirstSeen();
  const paymentParams = (p: NewPayment, seenNow: string, block?: { height: number; hash: string }) => {
    const id = paymentId(p.txid, p.vout);
    return {
      id,
      txid: p.txid,
      vout: p.vout,
      address: p.address,
      label_m: p.labelM,
      amount_sats: p.amountSats,
      block_height: block?.height ?? null,
      block_hash: block?.hash ?? null,
      created_at: firstSeen.of(id, seenNow),
      output_key: p.outputKey,
      tweak: p.tweak,
    };
  };
  const applyBlock = db.transaction((block: { height: number; hash: string }, payments: NewPayment[], spends: SpendSeen[] = []) => {
    const createdAt = new Date().toISOString();
    const stored = payments.map((p) => rowToPayment(q.upsertConfirmed.get(paymentParams(p, createdAt, block))));
    // After the payments: an output received and spent in the same block is both.
    const spent: PaymentRecord[] = [];
    for (const s of spends) {
      const row = q.spendConfirmed.get({ id: s.id, spent_txid: s.spentTxid, height: block.height });
      if (row !== undefined) spent.push(rowToPayment(row));
    }
    q.insertBlock.run(block.height, block.hash);
    q.setMeta.run('scanned_height', String(block.height));
    return { payments: stored, spent };
  });
  const rollbackAbove = db.transaction((height: number) => {
    const removed = q.paymentsAbove.all(height).map(rowToPayment);
    firstSeen.remember(removed);
    q.deletePaymentsAbove.run(height);
    const unspent = q.unspendAbove.run(height).changes;
    q.deleteBlocksAbove.run(height);
    q.setMeta.run('scanned_height', String(height));
    return { removed, unspent };
  });
  const markSpentPending = db.transaction((spends: SpendSeen[]) => {
    const marked: PaymentRecord[] = [];
    for (const s of spends) {
      const row = q.spendPending.get({ id: s.id, spent_txid: s.spentTxid });
      if (row !== undefined) marked.push(rowToPayment(row));
    }
    return marked;
  });
  const addPending = db.transaction((payments: NewPayment[]) => {
    const createdAt = new Date().toISOString();
    const added: PaymentRecord[] = [];
    for (const p of payments) {
      const row = q.insertPending.get(paymentParams(p, createdAt)) as PaymentRow | undefined;
      if (row !== undefined) added.push(rowToPayment(row));
    }
    return added;
  });
  const createLabel = db.transaction((label: string, amountSats: bigint, address: (m: number) => string) => {
    const existing = q.findLabel.get(label);
    if (existing !== undefined) return rowToLabel(existing);
    const m = Number(q.maxLabel.get()?.m ?? 0n) + 1;
    const record: LabelRecord = { m, label, address: address(m), amountSats, createdAt: new Date().toISOString() };
    q.insertLabel.run(m, label, record.address, amountSats, record.createdAt);
    return record;
  });
  return {
    createLabel,
    initProgress: db.transaction((startHeight: number, anchorHash: string | undefined) => {
      q.setMeta.run('start_height', String(startHeight));
      q.setMeta.run('scanned_height', String(startHeight - 1));
      if (anchorHash !== undefined) q.insertBlock.run(startHeight - 1, anchorHash);
    }),
    applyBlock,
    rollbackAbove,
    markSpentPending: (spends: SpendSeen[]) => (spends.length === 0 ? [] : markSpentPending(spends)),
    clearPendingSpends: db.transaction((txids: string[]) => txids.reduce((n, txid) => n + q.clearPendingSpend.run(txid).changes, 0)),
    addPending,
    removePending: db.transaction((txids: string[]) => txids.reduce((n, txid) => n + q.deletePending.run(txid).changes, 0)),
  };
}

type SyncOperations = ReturnType<typeof readMethods> & ReturnType<typeof writeMethods>;

/** A synchronous call as a settled promise (its throw as a rejection): the body of an async function runs at once. */
const settled = async <T>(run: () => T): Promise<T> => run();

/** The synchronous operations as the store's promises; `gate` decides when each runs (at once, or after a transaction). */
function asOperations(sync: SyncOperations, gate: <T>(run: () => T) => Promise<T>): StoreOperations {
  const ops = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(sync)) {
    ops[name] =
      name === 'progress' ? fn : (...args: unknown[]) => gate(() => Reflect.apply(fn as (...a: unknown[]) => unknown, undefined, args));
  }
  return ops as unknown as StoreOperations;
}

/**
 * Opens (creating when missing) the SQLite database at `path` in WAL mode, private (payments and
 * the keys' fingerprints; @repo/service's openDatabaseFile: `cannot open the SQLite file …
 * (DATA_DIR): …` when it cannot be opened, is not a database or a newer one, or cannot be
 * written). Amounts are kept as integer satoshis (64-bit, read as bigint) so no float ever
 * touches a stored amount. Every operation runs synchronously and returns a settled promise;
 * while a {@link Store.transaction} awaits its work (the one connection is inside it), calls on
 * the store wait for its end, so nothing outside joins or sees it.
 */
export function openStore(path: string, logger?: Logger): Store {
  const db = openDatabaseFile(path, {
    open: (file) => new Database(file),
    synchronous: 'NORMAL',
    setup(opened) {
      opened.pragma('foreign_keys = ON');
      opened.defaultSafeIntegers(true);
      opened.exec(SCHEMA);
      migrate(opened);
      opened.exec(SCHEMA_V2_INDEXES);
    },
    probeTable: 'meta',
    logger,
  });
  const q = prepareStatements(db);
  const sync: SyncOperations = { ...readMethods(db, q), ...writeMethods(db, q) };
  // The transaction in progress: calls on the store wait for it to end.
  let active: Promise<void> | undefined;
  const outside = <T>(run: () => T): Promise<T> => (active === undefined ? settled(run) : active.then(() => outside(run)));
  const inside = asOperations(sync, settled);
  return {
    ...asOperations(sync, outside),
    kind: 'sqlite',
    assertIdentity: (identity) =>
      outside(() => {
        for (const [key, value] of Object.entries(identity)) {
          const stored = q.getMeta.get(key)?.value;
          if (stored === undefined) q.setMeta.run(key, value);
          else if (stored !== value) throw new Error(identityMismatch(key, 'DATA_DIR', 'use another DATA_DIR'));
        }
      }),
    async transaction(work) {
      // Checked and taken in the same turn of the event loop: one transaction at a time.
      while (active !== undefined) await active;
      let end!: () => void;
      active = new Promise((resolve) => (end = resolve));
      try {
        db.exec('BEGIN');
        const result = await work(inside);
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      } finally {
        active = undefined;
        end();
      }
    },
    close: () =>
      outside(() => {
        db.close();
      }),
  };
}
