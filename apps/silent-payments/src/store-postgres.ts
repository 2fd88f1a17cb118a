import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { LabelRecord, NewPayment, PaymentFilter, PaymentRecord, ScanProgress, SpendSeen, Store, StoreOperations } from './store';
import {
  createFirstSeen,
  identityMismatch,
  LABEL_COLUMNS,
  ORDER,
  PAYMENT_COLUMNS,
  paymentId,
  rowToLabel,
  rowToPayment,
  totalsOf,
  type LabelRow,
  type PaymentRow,
} from './store-rows';

/**
 * The service's tables in a PostgreSQL database it may share with the tweak index (`idx_*`) and
 * with other servers: every row carries the `wallet` it belongs to (the service's base
 * silent-payment address), so servers with other keys never see each other's data.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS sp_meta (
  wallet TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (wallet, key)
);
CREATE TABLE IF NOT EXISTS sp_labels (
  wallet TEXT NOT NULL, m INTEGER NOT NULL CHECK (m >= 1), label TEXT NOT NULL, address TEXT NOT NULL,
  amount_sats BIGINT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (wallet, m), UNIQUE (wallet, label)
);
CREATE TABLE IF NOT EXISTS sp_blocks (
  wallet TEXT NOT NULL, height INTEGER NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (wallet, height)
);
CREATE TABLE IF NOT EXISTS sp_payments (
  wallet TEXT NOT NULL, id TEXT COLLATE "C" NOT NULL, txid TEXT COLLATE "C" NOT NULL, vout INTEGER NOT NULL,
  address TEXT NOT NULL, label_m INTEGER, amount_sats BIGINT NOT NULL, block_height INTEGER, block_hash TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed')), created_at TEXT COLLATE "C" NOT NULL,
  output_key TEXT NOT NULL, tweak TEXT NOT NULL, spent_txid TEXT COLLATE "C", spent_height INTEGER,
  PRIMARY KEY (wallet, id)
);
CREATE INDEX IF NOT EXISTS sp_payments_by_height ON sp_payments (wallet, block_height);
CREATE INDEX IF NOT EXISTS sp_payments_by_status ON sp_payments (wallet, status, txid);
CREATE INDEX IF NOT EXISTS sp_payments_by_spent_height ON sp_payments (wallet, spent_height);
CREATE INDEX IF NOT EXISTS sp_payments_by_spent_txid ON sp_payments (wallet, spent_txid);
CREATE INDEX IF NOT EXISTS sp_payments_by_label ON sp_payments (wallet, label_m);
`;

/** Connections the service's store opens at most (the index has a pool of its own). */
export const PAYMENTS_POOL_SIZE = 4;

/** An advisory lock key: servers creating the tables at once wait for each other. */
const SCHEMA_LOCK = 352_001;

const FILTER = `wallet = $1 AND ($2::text IS NULL OR status = $2) AND ($3::boolean IS NULL OR (spent_txid IS NOT NULL) = $3)
  AND ($4::int IS NULL OR label_m = $4)`;
const UNNEST_PAYMENTS = `unnest($4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::bigint[], $10::text[], $11::text[], $12::text[])
  AS u(id, txid, vout, address, label_m, amount, created_at, output_key, tweak)`;
const INSERT_PAYMENTS = `INSERT INTO sp_payments (wallet, id, txid, vout, address, label_m, amount_sats, block_height, block_hash, status, created_at, output_key, tweak)`;

/** Named statements ($1 is always the wallet): prepared once per connection by node-postgres, then executed by name. */
const SQL = {
  meta: 'SELECT key, value FROM sp_meta WHERE wallet = $1',
  setMeta: 'INSERT INTO sp_meta (wallet, key, value) VALUES ($1, $2, $3) ON CONFLICT (wallet, key) DO UPDATE SET value = EXCLUDED.value',
  findLabel: `SELECT ${LABEL_COLUMNS} FROM sp_labels WHERE wallet = $1 AND label = $2`,
  labelByIndex: `SELECT ${LABEL_COLUMNS} FROM sp_labels WHERE wallet = $1 AND m = $2`,
  labels: `SELECT ${LABEL_COLUMNS} FROM sp_labels WHERE wallet = $1 ORDER BY m`,
  labelsPaged: `SELECT ${LABEL_COLUMNS} FROM sp_labels WHERE wallet = $1 ORDER BY m LIMIT $2 OFFSET $3`,
  countLabels: 'SELECT COUNT(*) AS n FROM sp_labels WHERE wallet = $1',
  labelIndexes: 'SELECT m FROM sp_labels WHERE wallet = $1 ORDER BY m',
  maxLabel: 'SELECT COALESCE(MAX(m), 0) AS m FROM sp_labels WHERE wallet = $1',
  lockWallet: "SELECT pg_advisory_xact_lock(hashtext('sp_wallet:' || $1))",
  insertLabel: 'INSERT INTO sp_labels (wallet, m, label, address, amount_sats, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
  getPayment: `SELECT ${PAYMENT_COLUMNS} FROM sp_payments WHERE wallet = $1 AND id = $2`,
  listPayments: `SELECT ${PAYMENT_COLUMNS} FROM sp_payments WHERE ${FILTER} ${ORDER} LIMIT $5 OFFSET $6`,
  countPayments: `SELECT COUNT(*) AS n FROM sp_payments WHERE ${FILTER}`,
  labelPayments: `SELECT id, status, amount_sats FROM sp_payments WHERE wallet = $1 AND label_m = $2 ${ORDER}`,
  balance: `SELECT
      COALESCE(SUM(CASE WHEN spent_txid IS NULL AND status = 'confirmed' THEN amount_sats ELSE 0 END), 0) AS confirmed,
      COALESCE(SUM(CASE WHEN spent_txid IS NULL AND status = 'pending' THEN amount_sats ELSE 0 END), 0) AS pending,
      COALESCE(SUM(CASE WHEN spent_txid IS NOT NULL AND spent_height IS NULL THEN amount_sats ELSE 0 END), 0) AS spent_pending,
      COUNT(*) FILTER (WHERE spent_txid IS NULL) AS utxos
    FROM sp_payments WHERE wallet = $1`,
  spendConfirmed: `UPDATE sp_payments SET spent_txid = $3, spent_height = $4
    WHERE wallet = $1 AND id = $2 AND (spent_height IS NULL OR spent_txid IS DISTINCT FROM $3) RETURNING ${PAYMENT_COLUMNS}`,
  spendPending: `UPDATE sp_payments SET spent_txid = $3 WHERE wallet = $1 AND id = $2 AND spent_txid IS NULL RETURNING ${PAYMENT_COLUMNS}`,
  pendingSpendTxids: 'SELECT DISTINCT spent_txid FROM sp_payments WHERE wallet = $1 AND spent_txid IS NOT NULL AND spent_height IS NULL',
  clearPendingSpends:
    'UPDATE sp_payments SET spent_txid = NULL WHERE wallet = $1 AND spent_txid = ANY($2::text[]) AND spent_height IS NULL',
  unspendAbove: 'UPDATE sp_payments SET spent_txid = NULL, spent_height = NULL WHERE wallet = $1 AND spent_height > $2',
  paymentsAbove: `SELECT ${PAYMENT_COLUMNS} FROM sp_payments WHERE wallet = $1 AND block_height > $2 ${ORDER}`,
  upsertConfirmed: `${INSERT_PAYMENTS}
    SELECT $1, u.id, u.txid, u.vout, u.address, u.label_m, u.amount, $2, $3, 'confirmed', u.created_at, u.output_key, u.tweak FROM ${UNNEST_PAYMENTS}
    ON CONFLICT (wallet, id) DO UPDATE SET block_height = EXCLUDED.block_height, block_hash = EXCLUDED.block_hash, status = 'confirmed'
    RETURNING ${PAYMENT_COLUMNS}`,
  insertPending: `${INSERT_PAYMENTS}
    SELECT $1, u.id, u.txid, u.vout, u.address, u.label_m, u.amount, $2::int, $3::text, 'pending', u.created_at, u.output_key, u.tweak FROM ${UNNEST_PAYMENTS}
    ON CONFLICT (wallet, id) DO NOTHING RETURNING ${PAYMENT_COLUMNS}`,
  pendingTxids: "SELECT DISTINCT txid FROM sp_payments WHERE wallet = $1 AND status = 'pending'",
  deletePending: "DELETE FROM sp_payments WHERE wallet = $1 AND status = 'pending' AND txid = ANY($2::text[])",
  insertBlock:
    'INSERT INTO sp_blocks (wallet, height, hash) VALUES ($1, $2, $3) ON CONFLICT (wallet, height) DO UPDATE SET hash = EXCLUDED.hash',
  getBlock: 'SELECT hash FROM sp_blocks WHERE wallet = $1 AND height = $2',
  deleteBlocksAbove: 'DELETE FROM sp_blocks WHERE wallet = $1 AND height > $2',
  deletePaymentsAbove: 'DELETE FROM sp_payments WHERE wallet = $1 AND block_height > $2',
} as const;

type Named = keyof typeof SQL;
type Queryable = Pool | PoolClient;

/** Runs named statement `name` for `wallet`: its rows and how many it changed. */
async function run<R extends QueryResultRow>(on: Queryable, name: Named, wallet: string, values: unknown[] = []) {
  const result = await on.query<R>({ name: `sp_${name}`, text: SQL[name], values: [wallet, ...values] });
  return { rows: result.rows, count: result.rowCount ?? 0 };
}

/** Runs `work` between BEGIN and COMMIT on one client of the pool (ROLLBACK when it throws). */
async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The progress in the meta rows (`start_height`, `scanned_height`). */
function progressOf(rows: ReadonlyArray<{ key: string; value: string }>): ScanProgress {
  const get = (key: string) => rows.find((r) => r.key === key)?.value;
  const start = get('start_height');
  const scanned = get('scanned_height');
  return {
    startHeight: start === undefined ? undefined : Number(start),
    scannedHeight: scanned === undefined ? undefined : Number(scanned),
  };
}

/** The unnest arrays of payments ($4…$12 of upsertConfirmed and insertPending). */
function paymentArrays(payments: readonly NewPayment[], createdAt: (id: string) => string): unknown[] {
  const ids = payments.map((p) => paymentId(p.txid, p.vout));
  return [
    ids,
    payments.map((p) => p.txid),
    payments.map((p) => p.vout),
    payments.map((p) => p.address),
    payments.map((p) => p.labelM),
    payments.map((p) => p.amountSats.toString()),
    ids.map(createdAt),
    payments.map((p) => p.outputKey),
    payments.map((p) => p.tweak),
  ];
}

/** The records of `rows` in the order of `payments` (those with no row left out). */
function inOrder(payments: readonly NewPayment[], rows: readonly unknown[]): PaymentRecord[] {
  const byId = new Map(rows.map((row) => [(row as PaymentRow).id, rowToPayment(row)]));
  return payments.map((p) => byId.get(paymentId(p.txid, p.vout))).filter((p): p is PaymentRecord => p !== undefined);
}

/** Progress written inside a transaction, held in memory once it committed. */
interface Staging {
  stage(progress: ScanProgress): void;
  /** The progress as seen inside the transaction. */
  progress(): ScanProgress;
}

/**
 * Where the operations run: `read` for single statements, `atomic` for a write of several (a
 * transaction of its own, or the one it is inside), `progress` the progress as seen from there.
 */
interface Scope {
  read: Queryable;
  atomic<T>(work: (client: Queryable, staging: Staging) => Promise<T>): Promise<T>;
  progress(): ScanProgress;
}

/** The reads of the store for `wallet`, one statement each. */
function readOperations(wallet: string, scope: Scope) {
  const q = <R extends QueryResultRow>(name: Named, values: unknown[] = []) => run<R>(scope.read, name, wallet, values).then((r) => r.rows);
  const label = async (name: 'findLabel' | 'labelByIndex', key: string | number) => {
    const [row] = await q<LabelRow & QueryResultRow>(name, [key]);
    return row === undefined ? undefined : rowToLabel(row);
  };
  const filterValues = (f?: PaymentFilter) => [f?.status ?? null, f?.spent ?? null, f?.labelM ?? null];
  return {
    findLabel: (text: string) => label('findLabel', text),
    labelByIndex: (m: number) => label('labelByIndex', m),
    labels: async () => (await q<LabelRow & QueryResultRow>('labels')).map(rowToLabel),
    labelIndexes: async () => Uint32Array.from((await q<{ m: number }>('labelIndexes')).map((r) => r.m)),
    listPayments: async (limit: number, offset: number, filter?: PaymentFilter) =>
      (await q('listPayments', [...filterValues(filter), limit, offset])).map(rowToPayment),
    countPayments: async (filter?: PaymentFilter) => Number((await q<{ n: string }>('countPayments', filterValues(filter)))[0]?.n ?? 0),
    listLabels: async (limit: number, offset: number) =>
      (await q<LabelRow & QueryResultRow>('labelsPaged', [limit, offset])).map(rowToLabel),
    countLabels: async () => Number((await q<{ n: string }>('countLabels'))[0]?.n ?? 0),
    labelTotals: async (m: number) =>
      totalsOf(await q<{ id: string; status: 'pending' | 'confirmed'; amount_sats: string }>('labelPayments', [m])),
    async balance() {
      const [row] = await q<{ confirmed: string; pending: string; spent_pending: string; utxos: string }>('balance');
      return {
        confirmed: BigInt(row?.confirmed ?? 0),
        pending: BigInt(row?.pending ?? 0),
        spentPending: BigInt(row?.spent_pending ?? 0),
        utxoCount: Number(row?.utxos ?? 0),
      };
    },
    async getPayment(id: string) {
      const [row] = await q('getPayment', [id]);
      return row === undefined ? undefined : rowToPayment(row);
    },
    progress: () => scope.progress(),
    blockHash: async (height: number) => (await q<{ hash: string }>('getBlock', [height]))[0]?.hash,
    pendingSpendTxids: async () => (await q<{ spent_txid: string }>('pendingSpendTxids')).map((r) => r.spent_txid),
    pendingTxids: async () => (await q<{ txid: string }>('pendingTxids')).map((r) => r.txid),
  };
}

/** The writes of the store for `wallet`, each atomic (in `scope`). */
function writeOperations(wallet: string, scope: Scope, firstSeen: ReturnType<typeof createFirstSeen>) {
  const on =
    (c: Queryable) =>
    (name: Named, values: unknown[] = []) =>
      run(c, name, wallet, values);
  const spends = async (c: Queryable, name: 'spendConfirmed' | 'spendPending', seen: SpendSeen[], height?: number) => {
    const out: PaymentRecord[] = [];
    for (const s of seen) {
      const { rows } = await on(c)(name, height === undefined ? [s.id, s.spentTxid] : [s.id, s.spentTxid, height]);
      if (rows[0] !== undefined) out.push(rowToPayment(rows[0]));
    }
    return out;
  };
  const insertPayments = async (c: Queryable, payments: NewPayment[], block?: { height: number; hash: string }) => {
    if (payments.length === 0) return [];
    const now = new Date().toISOString();
    const arrays = paymentArrays(payments, (id) => firstSeen.of(id, now));
    const { rows } = await on(c)(block === undefined ? 'insertPending' : 'upsertConfirmed', [
      block?.height ?? null,
      block?.hash ?? null,
      ...arrays,
    ]);
    return inOrder(payments, rows);
  };
  return {
    createLabel: (label: string, amountSats: bigint, address: (m: number) => string) =>
      scope.atomic(async (c): Promise<LabelRecord> => {
        await on(c)('lockWallet');
        const [existing] = (await on(c)('findLabel', [label])).rows;
        if (existing !== undefined) return rowToLabel(existing as LabelRow);
        const m = Number((await on(c)('maxLabel')).rows[0]?.m ?? 0) + 1;
        const record: LabelRecord = { m, label, address: address(m), amountSats, createdAt: new Date().toISOString() };
        await on(c)('insertLabel', [m, label, record.address, amountSats.toString(), record.createdAt]);
        return record;
      }),
    initProgress: (startHeight: number, anchorHash: string | undefined) =>
      scope.atomic(async (c, staging) => {
        await on(c)('setMeta', ['start_height', String(startHeight)]);
        await on(c)('setMeta', ['scanned_height', String(startHeight - 1)]);
        if (anchorHash !== undefined) await on(c)('insertBlock', [startHeight - 1, anchorHash]);
        staging.stage({ startHeight, scannedHeight: startHeight - 1 });
      }),
    applyBlock: (block: { height: number; hash: string }, payments: NewPayment[], seen: SpendSeen[] = []) =>
      scope.atomic(async (c, staging) => {
        const stored = await insertPayments(c, payments, block);
        // After the payments: an output received and spent in the same block is both.
        const spent = await spends(c, 'spendConfirmed', seen, block.height);
        await on(c)('insertBlock', [block.height, block.hash]);
        await on(c)('setMeta', ['scanned_height', String(block.height)]);
        staging.stage({ ...staging.progress(), scannedHeight: block.height });
        return { payments: stored, spent };
      }),
    rollbackAbove: (height: number) =>
      scope.atomic(async (c, staging) => {
        const removed = (await on(c)('paymentsAbove', [height])).rows.map(rowToPayment);
        firstSeen.remember(removed);
        await on(c)('deletePaymentsAbove', [height]);
        const unspent = (await on(c)('unspendAbove', [height])).count;
        await on(c)('deleteBlocksAbove', [height]);
        await on(c)('setMeta', ['scanned_height', String(height)]);
        staging.stage({ ...staging.progress(), scannedHeight: height });
        return { removed, unspent };
      }),
    markSpentPending: (seen: SpendSeen[]) =>
      seen.length === 0 ? Promise.resolve([]) : scope.atomic((c) => spends(c, 'spendPending', seen)),
    clearPendingSpends: async (txids: string[]) => (txids.length === 0 ? 0 : (await on(scope.read)('clearPendingSpends', [txids])).count),
    addPending: (payments: NewPayment[]) => insertPayments(scope.read, payments),
    removePending: async (txids: string[]) => (txids.length === 0 ? 0 : (await on(scope.read)('deletePending', [txids])).count),
  };
}

/**
 * Opens the service's store in the PostgreSQL database of `url` for `wallet` (its base
 * silent-payment address): creates the tables when missing and reads the scan progress, held
 * in memory from then on (`progress()` answers at once). A pool of {@link PAYMENTS_POOL_SIZE}
 * connections; a transaction holds one of them from BEGIN to COMMIT or ROLLBACK.
 */
export async function openPostgresStore(url: string, wallet: string): Promise<Store> {
  const pool = new Pool({ connectionString: url, max: PAYMENTS_POOL_SIZE });
  // A connection that fails while idle must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  let progress: ScanProgress;
  try {
    await inTransaction(pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      await c.query(SCHEMA);
    });
    progress = progressOf((await run<{ key: string; value: string }>(pool, 'meta', wallet)).rows);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const firstSeen = createFirstSeen();
  const operations = (scope: Scope): StoreOperations => ({
    ...readOperations(wallet, scope),
    ...writeOperations(wallet, scope, firstSeen),
  });
  // One client from BEGIN to COMMIT; the progress it wrote is held once it committed.
  const transact = async <T>(work: (client: PoolClient, staging: Staging) => Promise<T>): Promise<T> => {
    let staged: ScanProgress | undefined;
    const staging: Staging = { stage: (p) => (staged = p), progress: () => staged ?? progress };
    const result = await inTransaction(pool, (client) => work(client, staging));
    if (staged !== undefined) progress = staged;
    return result;
  };
  return {
    ...operations({ read: pool, atomic: transact, progress: () => progress }),
    kind: 'postgres',
    assertIdentity: (identity) =>
      inTransaction(pool, async (c) => {
        await run(c, 'lockWallet', wallet);
        const stored = new Map((await run<{ key: string; value: string }>(c, 'meta', wallet)).rows.map((r) => [r.key, r.value]));
        for (const [key, value] of Object.entries(identity)) {
          const was = stored.get(key);
          if (was === undefined) await run(c, 'setMeta', wallet, [key, value]);
          else if (was !== value) throw new Error(identityMismatch(key, 'DATABASE_URL', 'use another DATABASE_URL'));
        }
      }),
    transaction: (work) =>
      transact((client, staging) =>
        work(operations({ read: client, atomic: (inner) => inner(client, staging), progress: () => staging.progress() })),
      ),
    close: () => pool.end(),
  };
}
