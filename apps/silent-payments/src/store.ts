import Database from 'better-sqlite3';
import { AppError } from '@repo/errors';
import { openDatabaseFile, type Logger } from '@repo/service';

/** A label handed out by `POST /generate-address` (BIP-352 label index m ≥ 1). */
export interface LabelRecord {
  m: number;
  label: string;
  address: string;
  amountSats: bigint;
  createdAt: string;
}

/** `pending` while only in the mempool, `confirmed` once in a block of the best chain. */
export type PaymentStatus = 'pending' | 'confirmed';

/** One output paid to the service. */
export interface PaymentRecord {
  /** `<txid>:<vout>`: the outpoint, stable from mempool to block and across reorgs. */
  id: string;
  txid: string;
  vout: number;
  /** The silent-payment address that was paid (labelled when a label matched). */
  address: string;
  /** The label index that matched: null for the unlabelled address, 0 for change. */
  labelM: number | null;
  amountSats: bigint;
  blockHeight: number | null;
  blockHash: string | null;
  status: PaymentStatus;
  createdAt: string;
  /** The x-only output key and the BIP-352 tweak t_k (hex), what a wallet needs to spend it. */
  outputKey: string;
  tweak: string;
  /** The transaction spending this output (in the mempool or in a block), null while unspent. */
  spentTxid: string | null;
  /** The height of the block holding the spend; null while unspent or spent in the mempool only. */
  spentHeight: number | null;
}

/** A payment found by the scanner, before it is stored. */
export type NewPayment = Omit<PaymentRecord, 'id' | 'createdAt' | 'status' | 'blockHeight' | 'blockHash' | 'spentTxid' | 'spentHeight'>;

/** Filters of {@link Store.listPayments} (`GET /payments`). */
export interface PaymentFilter {
  status?: PaymentStatus | undefined;
  spent?: boolean | undefined;
  /** A label index m (label_m); undefined: any. */
  labelM?: number | undefined;
}

/** Totals in satoshis (`GET /balance`). */
export interface BalanceTotals {
  /** Confirmed outputs with no spend seen. */
  confirmed: bigint;
  /** Mempool outputs with no spend seen. */
  pending: bigint;
  /** Outputs (confirmed or not) whose spend is in the mempool only. */
  spentPending: bigint;
  /** Outputs counted in confirmed and pending. */
  utxoCount: number;
}

/** An output spent by a transaction: `<txid>:<vout>` of the spent output and the spender. */
export interface SpendSeen {
  id: string;
  spentTxid: string;
}

/** A label's totals in satoshis (an invoice, `GET /labels/{label}`). */
export interface LabelTotals {
  received: bigint;
  pending: bigint;
  payments: string[];
}

/** Where the scanner stands. */
export interface ScanProgress {
  /** First height scanned (SP_START_HEIGHT or the tip at first start); undefined before the first start. */
  startHeight: number | undefined;
  /** Last height scanned; startHeight - 1 before any block. */
  scannedHeight: number | undefined;
}

/**
 * The store's transaction of one block (src/scanner/apply.ts): what a block consumer writes
 * through `db` inside it commits or rolls back with the block's payments and scan progress.
 */
export interface BlockTransaction {
  /** The database, inside the transaction (statements run synchronously; nested transactions are savepoints). */
  readonly db: Database.Database;
}

/** The service's SQLite database: labels, payments, scan progress and block hashes. */
export interface Store {
  /** Throws an Error when the database was made for other keys or another network. */
  assertIdentity(identity: { network: string; scanPub: string; spendPub: string }): void;
  findLabel(label: string): LabelRecord | undefined;
  /** Creates the label with the next index m ≥ 1; `address(m)` gives its address. */
  createLabel(label: string, amountSats: bigint, address: (m: number) => string): LabelRecord;
  labels(): LabelRecord[];
  /** The label indexes m ≥ 1 handed out, ascending, compactly (what the scanner needs at start). */
  labelIndexes(): Uint32Array;
  labelByIndex(m: number): LabelRecord | undefined;
  listPayments(limit: number, offset: number, filter?: PaymentFilter): PaymentRecord[];
  countPayments(filter?: PaymentFilter): number;
  /** Labels m ≥ 1, oldest first, paged. */
  listLabels(limit: number, offset: number): LabelRecord[];
  countLabels(): number;
  /** Confirmed and mempool totals of label m and its payment ids. */
  labelTotals(m: number): LabelTotals;
  balance(): BalanceTotals;
  getPayment(id: string): PaymentRecord | undefined;
  progress(): ScanProgress;
  /** Records the start height and the hash of the block below it (the reorg anchor). */
  initProgress(startHeight: number, anchorHash: string | undefined): void;
  blockHash(height: number): string | undefined;
  /**
   * Stores a scanned block, its payments (confirmed), the spends of stored outputs among its
   * inputs and the new progress, atomically. Returns the payments stored and the outputs whose
   * spend this block confirmed.
   */
  applyBlock(
    block: { height: number; hash: string },
    payments: NewPayment[],
    spends?: SpendSeen[],
  ): { payments: PaymentRecord[]; spent: PaymentRecord[] };
  /**
   * Removes the blocks above `height` and their payments, and forgets the spends confirmed
   * above it (those outputs are unspent again until the spend is seen anew); returns the
   * payments removed (as they were) and the number of spends undone.
   */
  rollbackAbove(height: number): { removed: PaymentRecord[]; unspent: number };
  /** Runs `work` in one transaction (committed when it returns, rolled back when it throws); the store's own writes inside it join it. */
  transaction<T>(work: (tx: BlockTransaction) => T): T;
  /** Marks outputs spent by mempool transactions (unspent ones only); returns those newly marked. */
  markSpentPending(spends: SpendSeen[]): PaymentRecord[];
  /** txids of the mempool spends (spent, no block yet). */
  pendingSpendTxids(): string[];
  /** Forgets mempool spends by `txids` (left the mempool unconfirmed); returns the outputs unspent again. */
  clearPendingSpends(txids: string[]): number;
  /** Stores payments seen in the mempool (existing ones kept); returns those that are new. */
  addPending(payments: NewPayment[]): PaymentRecord[];
  /** txids of the pending payments. */
  pendingTxids(): string[];
  /** Deletes the pending payments of `txids` (left the mempool without confirming). */
  removePending(txids: string[]): number;
  close(): void;
}

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

/** How many payments removed by reorgs the store remembers the first sighting of (see openStore). */
export const REORG_MEMORY = 10_000;

interface PaymentRow {
  id: string;
  txid: string;
  vout: number;
  address: string;
  label_m: number | null;
  amount_sats: bigint;
  block_height: number | null;
  block_hash: string | null;
  status: PaymentStatus;
  created_at: string;
  output_key: string;
  tweak: string;
  spent_txid: string | null;
  spent_height: number | null;
}

interface LabelRow {
  m: number;
  label: string;
  address: string;
  amount_sats: bigint;
  created_at: string;
}

function toPayment(row: PaymentRow): PaymentRecord {
  return {
    id: row.id,
    txid: row.txid,
    vout: row.vout,
    address: row.address,
    labelM: row.label_m,
    amountSats: BigInt(row.amount_sats),
    blockHeight: row.block_height,
    blockHash: row.block_hash,
    status: row.status,
    createdAt: row.created_at,
    outputKey: row.output_key,
    tweak: row.tweak,
    spentTxid: row.spent_txid,
    spentHeight: row.spent_height,
  };
}

function toLabel(row: LabelRow): LabelRecord {
  return { m: row.m, label: row.label, address: row.address, amountSats: BigInt(row.amount_sats), createdAt: row.created_at };
}

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

/** The outpoint id of a payment. */
export function paymentId(txid: string, vout: number): string {
  return `${txid}:${vout}`;
}

/** The columns of a payment row an insert gives, and those a read returns. */
const INSERT_COLUMNS = 'id, txid, vout, address, label_m, amount_sats, block_height, block_hash, status, created_at, output_key, tweak';
const PAYMENT_COLUMNS = `${INSERT_COLUMNS}, spent_txid, spent_height`;
/** Pending first, then the newest block first; within a block, transaction order is not kept, so txid/vout. */
const ORDER = 'ORDER BY block_height IS NULL DESC, block_height DESC, created_at DESC, txid, vout';

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

const num = (v: unknown): number => Number(v);
const normalise = (row: PaymentRow): PaymentRow => ({
  ...row,
  vout: num(row.vout),
  label_m: row.label_m === null ? null : num(row.label_m),
  block_height: row.block_height === null ? null : num(row.block_height),
  spent_height: row.spent_height === null ? null : num(row.spent_height),
});
const rowToPayment = (row: unknown): PaymentRecord => toPayment(normalise(row as PaymentRow));
const rowToLabel = (row: LabelRow): LabelRecord => toLabel({ ...row, m: num(row.m) });

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

/** The store's reads: one statement each, nothing written. */
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
      for (const row of q.labelIndexes.iterate()) if (i < out.length) out[i++] = num(row.m);
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
    labelTotals(m: number) {
      let received = 0n;
      let pending = 0n;
      const payments: string[] = [];
      for (const row of q.labelPayments.all(m)) {
        payments.push(row.id);
        if (row.status === 'confirmed') received += BigInt(row.amount_sats);
        else pending += BigInt(row.amount_sats);
      }
      return { received, pending, payments };
    },
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

/**
 * Opens (creating when missing) the SQLite database at `path` in WAL mode, private (payments and
 * the keys' fingerprints; @repo/service's openDatabaseFile: `cannot open the SQLite file …
 * (DATA_DIR): …` when it cannot be opened, is not a database or a newer one, or cannot be
 * written). Amounts are kept as integer satoshis (64-bit, read as bigint) so no float ever
 * touches a stored amount.
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

  // When the payments a reorg removed were first seen, for when they come back (mined again or
  // back in the mempool): `created_at` stays the first sighting. In memory, the most recent
  // REORG_MEMORY of them; after a restart in between, a payment that comes back is seen anew.
  const firstSeen = new Map<string, string>();

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
      created_at: firstSeen.get(id) ?? seenNow,
      output_key: p.outputKey,
      tweak: p.tweak,
    };
  };

  const applyBlock = db.transaction((block: { height: number; hash: string }, payments: NewPayment[], spends: SpendSeen[]) => {
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
    for (const p of removed) {
      firstSeen.delete(p.id);
      firstSeen.set(p.id, p.createdAt);
    }
    for (const id of firstSeen.keys()) {
      if (firstSeen.size <= REORG_MEMORY) break;
      firstSeen.delete(id);
    }
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
  const clearPendingSpends = db.transaction((txids: string[]) => txids.reduce((n, txid) => n + q.clearPendingSpend.run(txid).changes, 0));

  const addPending = db.transaction((payments: NewPayment[]) => {
    const createdAt = new Date().toISOString();
    const added: PaymentRecord[] = [];
    for (const p of payments) {
      const row = q.insertPending.get(paymentParams(p, createdAt)) as PaymentRow | undefined;
      if (row !== undefined) added.push(rowToPayment(row));
    }
    return added;
  });

  const removePending = db.transaction((txids: string[]) => txids.reduce((n, txid) => n + q.deletePending.run(txid).changes, 0));

  const createLabel = db.transaction((label: string, amountSats: bigint, address: (m: number) => string) => {
    const existing = q.findLabel.get(label);
    if (existing !== undefined) return rowToLabel(existing);
    const m = Number(q.maxLabel.get()?.m ?? 0n) + 1;
    const record: LabelRecord = { m, label, address: address(m), amountSats, createdAt: new Date().toISOString() };
    q.insertLabel.run(m, label, record.address, amountSats, record.createdAt);
    return record;
  });

  return {
    ...readMethods(db, q),
    assertIdentity(identity) {
      for (const [key, value] of Object.entries(identity)) {
        const stored = q.getMeta.get(key)?.value;
        if (stored === undefined) q.setMeta.run(key, value);
        else if (stored !== value) {
          throw new Error(
            `the database in DATA_DIR was made for another ${key === 'network' ? 'network (SP_NETWORK)' : 'key set (SP_SCAN_KEY/SP_SPEND_PUBKEY)'}; use another DATA_DIR`,
          );
        }
      }
    },
    createLabel: (label, amountSats, address) => createLabel(label, amountSats, address),
    initProgress: db.transaction((startHeight: number, anchorHash: string | undefined) => {
      q.setMeta.run('start_height', String(startHeight));
      q.setMeta.run('scanned_height', String(startHeight - 1));
      if (anchorHash !== undefined) q.insertBlock.run(startHeight - 1, anchorHash);
    }),
    applyBlock: (block, payments, spends = []) => applyBlock(block, payments, spends),
    rollbackAbove: (height) => rollbackAbove(height),
    transaction: (work) => db.transaction(() => work({ db }))(),
    markSpentPending: (spends) => (spends.length === 0 ? [] : markSpentPending(spends)),
    clearPendingSpends: (txids) => clearPendingSpends(txids),
    addPending: (payments) => addPending(payments),
    removePending: (txids) => removePending(txids),
    close: () => db.close(),
  };
}

/** A store built without touching the disk: `open()` (the app's `start()`) creates DATA_DIR and opens the file. */
export interface DeferredStore extends Store {
  /** Creates the directory and opens (or creates) the database; later calls do nothing. Throws after `close()`. */
  open(): void;
  /** Whether the database is open: after `open()`, before `close()`. */
  readonly isOpen: boolean;
}

/** The store's methods that need the database (all but `progress` and `close`, which have answers without it). */
type DatabaseMethod = Exclude<keyof Store, 'progress' | 'close'>;

/**
 * The store of `path`, opened by `open()`: building the app writes nothing. Before `open()` and after `close()`, `progress()` answers nothing scanned
 * yet and every other read or write throws a SERVICE_UNAVAILABLE error (503 to a client), never
 * a crash; `close()` is safe at any time and more than once.
 */
export function createStore(path: string, logger?: Logger): DeferredStore {
  let db: Store | undefined;
  let closed = false;
  const current = (): Store => {
    if (db !== undefined) return db;
    throw new AppError('SERVICE_UNAVAILABLE', {
      message: closed ? 'the service is stopping' : 'the service is starting',
      details: closed ? 'the database is closed' : 'the database is not open yet',
    });
  };
  const via = <K extends DatabaseMethod>(name: K): Store[K] =>
    ((...args: unknown[]): unknown => Reflect.apply(current()[name] as (...a: unknown[]) => unknown, undefined, args)) as Store[K];
  return {
    open() {
      if (closed) throw new Error(`the database ${path} was closed: build the app again`);
      db ??= openStore(path, logger);
    },
    get isOpen() {
      return db !== undefined;
    },
    progress: () => db?.progress() ?? { startHeight: undefined, scannedHeight: undefined },
    close() {
      closed = true;
      const open = db;
      db = undefined;
      open?.close();
    },
    assertIdentity: via('assertIdentity'),
    findLabel: via('findLabel'),
    createLabel: via('createLabel'),
    labels: via('labels'),
    labelIndexes: via('labelIndexes'),
    labelByIndex: via('labelByIndex'),
    listPayments: via('listPayments'),
    countPayments: via('countPayments'),
    listLabels: via('listLabels'),
    countLabels: via('countLabels'),
    labelTotals: via('labelTotals'),
    balance: via('balance'),
    getPayment: via('getPayment'),
    initProgress: via('initProgress'),
    blockHash: via('blockHash'),
    applyBlock: via('applyBlock'),
    rollbackAbove: via('rollbackAbove'),
    transaction: via('transaction'),
    markSpentPending: via('markSpentPending'),
    pendingSpendTxids: via('pendingSpendTxids'),
    clearPendingSpends: via('clearPendingSpends'),
    addPending: via('addPending'),
    pendingTxids: via('pendingTxids'),
    removePending: via('removePending'),
  };
}
