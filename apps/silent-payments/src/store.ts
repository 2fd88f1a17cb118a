import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

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
}

/** A payment found by the scanner, before it is stored. */
export type NewPayment = Omit<PaymentRecord, 'id' | 'createdAt' | 'status' | 'blockHeight' | 'blockHash'>;

/** Where the scanner stands. */
export interface ScanProgress {
  /** First height scanned (SP_START_HEIGHT or the tip at first start); undefined before the first start. */
  startHeight: number | undefined;
  /** Last height scanned; startHeight - 1 before any block. */
  scannedHeight: number | undefined;
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
  /** Labels handed out (MAX_LABELS bounds it). */
  countLabels(): number;
  labelByIndex(m: number): LabelRecord | undefined;
  listPayments(limit: number, offset: number): PaymentRecord[];
  countPayments(): number;
  getPayment(id: string): PaymentRecord | undefined;
  progress(): ScanProgress;
  /** Records the start height and the hash of the block below it (the reorg anchor). */
  initProgress(startHeight: number, anchorHash: string | undefined): void;
  blockHash(height: number): string | undefined;
  /** Stores a scanned block, its payments (confirmed) and the new progress, atomically. */
  applyBlock(block: { height: number; hash: string }, payments: NewPayment[]): PaymentRecord[];
  /** Removes the blocks above `height` and their payments; returns the payments removed. */
  rollbackAbove(height: number): number;
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
  tweak TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_by_height ON payments (block_height);
CREATE INDEX IF NOT EXISTS payments_by_status ON payments (status, txid);
`;

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
  };
}

function toLabel(row: LabelRow): LabelRecord {
  return { m: row.m, label: row.label, address: row.address, amountSats: BigInt(row.amount_sats), createdAt: row.created_at };
}

/** The outpoint id of a payment. */
export function paymentId(txid: string, vout: number): string {
  return `${txid}:${vout}`;
}

/**
 * Opens (creating when missing) the SQLite database at `path` in WAL mode. Amounts are kept as
 * integer satoshis (64-bit, read as bigint) so no float ever touches a stored amount.
 */
export function openStore(path: string): Store {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Created 0600 before SQLite opens it: the WAL and shm files take the database's mode.
  closeSync(openSync(path, 'a', 0o600));
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(true);
  db.exec(SCHEMA);

  const getMeta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
  const setMeta = db.prepare<[string, string]>(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
  const meta = (key: string) => getMeta.get(key)?.value;

  const findLabel = db.prepare<[string], LabelRow>('SELECT m, label, address, amount_sats, created_at FROM labels WHERE label = ?');
  const labelByIndex = db.prepare<[number], LabelRow>('SELECT m, label, address, amount_sats, created_at FROM labels WHERE m = ?');
  const allLabels = db.prepare<[], LabelRow>('SELECT m, label, address, amount_sats, created_at FROM labels ORDER BY m');
  const maxLabel = db.prepare<[], { m: bigint | null }>('SELECT MAX(m) AS m FROM labels');
  const countLabels = db.prepare<[], { n: bigint }>('SELECT COUNT(*) AS n FROM labels');
  const labelIndexes = db.prepare<[], { m: bigint }>('SELECT m FROM labels ORDER BY m');
  const insertLabel = db.prepare('INSERT INTO labels (m, label, address, amount_sats, created_at) VALUES (?, ?, ?, ?, ?)');

  const paymentColumns = 'id, txid, vout, address, label_m, amount_sats, block_height, block_hash, status, created_at, output_key, tweak';
  // Pending first, then the newest block first; within a block, transaction order is not kept, so txid/vout.
  const listPayments = db.prepare<[number, number], PaymentRow>(
    `SELECT ${paymentColumns} FROM payments ORDER BY block_height IS NULL DESC, block_height DESC, created_at DESC, txid, vout LIMIT ? OFFSET ?`,
  );
  const countPayments = db.prepare<[], { n: bigint }>('SELECT COUNT(*) AS n FROM payments');
  const getPayment = db.prepare<[string], PaymentRow>(`SELECT ${paymentColumns} FROM payments WHERE id = ?`);
  const upsertConfirmed = db.prepare(
    `INSERT INTO payments (${paymentColumns}) VALUES (@id, @txid, @vout, @address, @label_m, @amount_sats, @block_height, @block_hash, 'confirmed', @created_at, @output_key, @tweak)
     ON CONFLICT (id) DO UPDATE SET block_height = excluded.block_height, block_hash = excluded.block_hash, status = 'confirmed'
     RETURNING ${paymentColumns}`,
  );
  const insertPending = db.prepare(
    `INSERT INTO payments (${paymentColumns}) VALUES (@id, @txid, @vout, @address, @label_m, @amount_sats, NULL, NULL, 'pending', @created_at, @output_key, @tweak)
     ON CONFLICT (id) DO NOTHING RETURNING ${paymentColumns}`,
  );
  const pendingTxids = db.prepare<[], { txid: string }>("SELECT DISTINCT txid FROM payments WHERE status = 'pending'");
  const deletePending = db.prepare<[string]>("DELETE FROM payments WHERE status = 'pending' AND txid = ?");
  const insertBlock = db.prepare<[number, string]>('INSERT OR REPLACE INTO blocks (height, hash) VALUES (?, ?)');
  const getBlock = db.prepare<[number], { hash: string }>('SELECT hash FROM blocks WHERE height = ?');
  const deleteBlocksAbove = db.prepare<[number]>('DELETE FROM blocks WHERE height > ?');
  const deletePaymentsAbove = db.prepare<[number]>('DELETE FROM payments WHERE block_height > ?');

  const paymentParams = (p: NewPayment, createdAt: string, block?: { height: number; hash: string }) => ({
    id: paymentId(p.txid, p.vout),
    txid: p.txid,
    vout: p.vout,
    address: p.address,
    label_m: p.labelM,
    amount_sats: p.amountSats,
    block_height: block?.height ?? null,
    block_hash: block?.hash ?? null,
    created_at: createdAt,
    output_key: p.outputKey,
    tweak: p.tweak,
  });

  const num = (v: unknown): number => Number(v);
  const normalise = (row: PaymentRow): PaymentRow => ({
    ...row,
    vout: num(row.vout),
    label_m: row.label_m === null ? null : num(row.label_m),
    block_height: row.block_height === null ? null : num(row.block_height),
  });

  const applyBlock = db.transaction((block: { height: number; hash: string }, payments: NewPayment[]) => {
    const createdAt = new Date().toISOString();
    const stored = payments.map((p) => toPayment(normalise(upsertConfirmed.get(paymentParams(p, createdAt, block)) as PaymentRow)));
    insertBlock.run(block.height, block.hash);
    setMeta.run('scanned_height', String(block.height));
    return stored;
  });

  const rollbackAbove = db.transaction((height: number) => {
    const removed = deletePaymentsAbove.run(height).changes;
    deleteBlocksAbove.run(height);
    setMeta.run('scanned_height', String(height));
    return removed;
  });

  const addPending = db.transaction((payments: NewPayment[]) => {
    const createdAt = new Date().toISOString();
    const added: PaymentRecord[] = [];
    for (const p of payments) {
      const row = insertPending.get(paymentParams(p, createdAt)) as PaymentRow | undefined;
      if (row !== undefined) added.push(toPayment(normalise(row)));
    }
    return added;
  });

  const removePending = db.transaction((txids: string[]) => txids.reduce((n, txid) => n + deletePending.run(txid).changes, 0));

  const createLabel = db.transaction((label: string, amountSats: bigint, address: (m: number) => string) => {
    const existing = findLabel.get(label);
    if (existing !== undefined) return toLabel({ ...existing, m: num(existing.m) });
    const m = Number(maxLabel.get()?.m ?? 0n) + 1;
    const record: LabelRecord = { m, label, address: address(m), amountSats, createdAt: new Date().toISOString() };
    insertLabel.run(m, label, record.address, amountSats, record.createdAt);
    return record;
  });

  const optionalInt = (key: string) => {
    const value = meta(key);
    return value === undefined ? undefined : Number(value);
  };

  return {
    assertIdentity(identity) {
      for (const [key, value] of Object.entries(identity)) {
        const stored = meta(key);
        if (stored === undefined) setMeta.run(key, value);
        else if (stored !== value) {
          throw new Error(
            `the database in DATA_DIR was made for another ${key === 'network' ? 'network (SP_NETWORK)' : 'key set (SP_SCAN_KEY/SP_SPEND_PUBKEY)'}; use another DATA_DIR`,
          );
        }
      }
    },
    findLabel(label) {
      const row = findLabel.get(label);
      return row === undefined ? undefined : toLabel({ ...row, m: num(row.m) });
    },
    createLabel: (label, amountSats, address) => createLabel(label, amountSats, address),
    labels: () => allLabels.all().map((row) => toLabel({ ...row, m: num(row.m) })),
    labelIndexes() {
      const out = new Uint32Array(Number(countLabels.get()?.n ?? 0n));
      let i = 0;
      for (const row of labelIndexes.iterate()) if (i < out.length) out[i++] = num(row.m);
      return out.subarray(0, i);
    },
    countLabels: () => Number(countLabels.get()?.n ?? 0n),
    labelByIndex(m) {
      const row = labelByIndex.get(m);
      return row === undefined ? undefined : toLabel({ ...row, m: num(row.m) });
    },
    listPayments: (limit, offset) => listPayments.all(limit, offset).map((row) => toPayment(normalise(row))),
    countPayments: () => Number(countPayments.get()?.n ?? 0n),
    getPayment(id) {
      const row = getPayment.get(id);
      return row === undefined ? undefined : toPayment(normalise(row));
    },
    progress: () => ({ startHeight: optionalInt('start_height'), scannedHeight: optionalInt('scanned_height') }),
    initProgress: db.transaction((startHeight: number, anchorHash: string | undefined) => {
      setMeta.run('start_height', String(startHeight));
      setMeta.run('scanned_height', String(startHeight - 1));
      if (anchorHash !== undefined) insertBlock.run(startHeight - 1, anchorHash);
    }),
    blockHash: (height) => getBlock.get(height)?.hash,
    applyBlock: (block, payments) => applyBlock(block, payments),
    rollbackAbove: (height) => rollbackAbove(height),
    addPending: (payments) => addPending(payments),
    pendingTxids: () => pendingTxids.all().map((row) => row.txid),
    removePending: (txids) => removePending(txids),
    close: () => db.close(),
  };
}
