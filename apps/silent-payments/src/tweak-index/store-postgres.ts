import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { BlockRecord } from './block-record';
import { groupOutputs, hexBytes, type StoredBlock, type StoredSpent, type StoredTx, type StoreSize, type TweakIndexStore } from './store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idx_blocks (
  height INTEGER PRIMARY KEY, hash BYTEA NOT NULL, header BYTEA NOT NULL, time BIGINT NOT NULL,
  new_filter BYTEA NOT NULL, spent_filter BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS idx_txs (
  height INTEGER NOT NULL, pos INTEGER NOT NULL, txid BYTEA NOT NULL, tweak BYTEA NOT NULL, PRIMARY KEY (height, pos)
);
CREATE TABLE IF NOT EXISTS idx_outputs (
  txid BYTEA NOT NULL, vout INTEGER NOT NULL, height INTEGER NOT NULL, value BIGINT NOT NULL, xonly BYTEA NOT NULL,
  spent_height INTEGER, PRIMARY KEY (txid, vout)
);
CREATE INDEX IF NOT EXISTS idx_outputs_height ON idx_outputs (height);
CREATE INDEX IF NOT EXISTS idx_outputs_spent ON idx_outputs (spent_height) WHERE spent_height IS NOT NULL;
CREATE TABLE IF NOT EXISTS idx_spent (
  height INTEGER NOT NULL, pos INTEGER NOT NULL, txid BYTEA NOT NULL, vout INTEGER NOT NULL, spender BYTEA NOT NULL,
  PRIMARY KEY (height, pos)
);
`;

/** Connections the pool opens at most (reads of the protocols and the indexer's writes share it). */
export const POSTGRES_POOL_SIZE = 8;

/** Named statements: prepared once per connection by node-postgres, then executed by name. */
const SQL = {
  block: 'INSERT INTO idx_blocks (height, hash, header, time, new_filter, spent_filter) VALUES ($1, $2, $3, $4, $5, $6)',
  txs: 'INSERT INTO idx_txs (height, pos, txid, tweak) SELECT $1, p, t, w FROM unnest($2::int[], $3::bytea[], $4::bytea[]) AS u(p, t, w)',
  outputs:
    'INSERT INTO idx_outputs (txid, vout, height, value, xonly) SELECT t, v, $1, a, x FROM unnest($2::bytea[], $3::int[], $4::bigint[], $5::bytea[]) AS u(t, v, a, x) ' +
    'ON CONFLICT (txid, vout) DO UPDATE SET height = EXCLUDED.height, value = EXCLUDED.value, xonly = EXCLUDED.xonly, spent_height = NULL',
  spent:
    'INSERT INTO idx_spent (height, pos, txid, vout, spender) SELECT $1, p, t, v, s FROM unnest($2::int[], $3::bytea[], $4::int[], $5::bytea[]) AS u(p, t, v, s)',
  mark: 'UPDATE idx_outputs o SET spent_height = $1 FROM unnest($2::bytea[], $3::int[]) AS u(t, v) WHERE o.txid = u.t AND o.vout = u.v',
  dropOutputs: 'DELETE FROM idx_outputs WHERE height >= $1',
  unspend: 'UPDATE idx_outputs SET spent_height = NULL WHERE spent_height >= $1',
  dropTxs: 'DELETE FROM idx_txs WHERE height >= $1',
  dropSpent: 'DELETE FROM idx_spent WHERE height >= $1',
  dropBlocks: 'DELETE FROM idx_blocks WHERE height >= $1',
  tip: 'SELECT height, hash FROM idx_blocks ORDER BY height DESC LIMIT 1',
  first: 'SELECT MIN(height) AS h FROM idx_blocks',
  blocks: 'SELECT * FROM idx_blocks WHERE height BETWEEN $1 AND $2 ORDER BY height',
  txRows: 'SELECT height, pos, txid, tweak FROM idx_txs WHERE height BETWEEN $1 AND $2 ORDER BY height, pos',
  outRows: 'SELECT txid, vout, value, xonly, spent_height FROM idx_outputs WHERE height BETWEEN $1 AND $2 ORDER BY height, txid, vout',
  spentRows: 'SELECT height, txid, vout, spender FROM idx_spent WHERE height BETWEEN $1 AND $2 ORDER BY height, pos',
} as const;

type Named = keyof typeof SQL;

/** The tweak index in PostgreSQL (`DATABASE_URL`), shared by several servers (docs/silent-payments.md, "The tweak index (light wallets)"). */
export function createPostgresIndexStore(url: string): TweakIndexStore {
  let pool: Pool | undefined;
  const handle = (): Pool => {
    if (pool === undefined) throw new Error('the tweak index store is not open');
    return pool;
  };
  const run = async <R extends QueryResultRow>(on: Pool | PoolClient, name: Named, values: unknown[]): Promise<R[]> =>
    (await on.query<R>({ name: `idx_${name}`, text: SQL[name], values })).rows;

  const inTransaction = async (work: (client: PoolClient) => Promise<void>): Promise<void> => {
    const client = await handle().connect();
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };

  const apply = async (c: PoolClient, r: BlockRecord): Promise<void> => {
    await run(c, 'block', [
      r.height,
      hexBytes(r.hash),
      Buffer.from(r.header),
      r.time,
      Buffer.from(r.newOutputsFilter),
      Buffer.from(r.spentFilter),
    ]);
    await run(c, 'txs', [r.height, r.txs.map((_, i) => i), r.txs.map((t) => hexBytes(t.txid)), r.txs.map((t) => Buffer.from(t.tweak))]);
    const outs = r.txs.flatMap((t) => t.outputs.map((o) => ({ txid: hexBytes(t.txid), ...o })));
    await run(c, 'outputs', [
      r.height,
      outs.map((o) => o.txid),
      outs.map((o) => o.vout),
      outs.map((o) => o.value.toString()),
      outs.map((o) => Buffer.from(o.xonly)),
    ]);
    const spentTxids = r.spent.map((s) => hexBytes(s.txid));
    const spentVouts = r.spent.map((s) => s.vout);
    await run(c, 'spent', [r.height, r.spent.map((_, i) => i), spentTxids, spentVouts, r.spent.map((s) => hexBytes(s.spender))]);
    await run(c, 'mark', [r.height, spentTxids, spentVouts]);
  };

  return {
    kind: 'postgres',
    async open() {
      pool = new Pool({ connectionString: url, max: POSTGRES_POOL_SIZE });
      // A connection that fails while idle must not crash the process; the next query reports it.
      pool.on('error', () => undefined);
      await pool.query(SCHEMA);
    },
    async applyBlock(record) {
      await inTransaction((c) => apply(c, record));
    },
    async rollback(height) {
      await inTransaction(async (c) => {
        for (const name of ['dropOutputs', 'unspend', 'dropTxs', 'dropSpent', 'dropBlocks'] as const) await run(c, name, [height]);
      });
    },
    async tip() {
      const [row] = await run<{ height: number; hash: Buffer }>(handle(), 'tip', []);
      return row && { height: row.height, hash: row.hash.toString('hex') };
    },
    async firstHeight() {
      const [row] = await run<{ h: number | null }>(handle(), 'first', []);
      return row?.h ?? undefined;
    },
    async blocks(from, to): Promise<StoredBlock[]> {
      const rows = await run<{ height: number; hash: Buffer; header: Buffer; time: string; new_filter: Buffer; spent_filter: Buffer }>(
        handle(),
        'blocks',
        [from, to],
      );
      return rows.map((r) => ({
        height: r.height,
        hash: r.hash.toString('hex'),
        header: Uint8Array.from(r.header),
        time: Number(r.time),
        newOutputsFilter: Uint8Array.from(r.new_filter),
        spentFilter: Uint8Array.from(r.spent_filter),
      }));
    },
    async txs(from, to): Promise<StoredTx[]> {
      const [txRows, outRows] = await Promise.all([
        run<{ height: number; pos: number; txid: Buffer; tweak: Buffer }>(handle(), 'txRows', [from, to]),
        run<{ txid: Buffer; vout: number; value: string; xonly: Buffer; spent_height: number | null }>(handle(), 'outRows', [from, to]),
      ]);
      return groupOutputs(
        txRows,
        outRows.map((o) => ({ txid: o.txid, vout: o.vout, value: BigInt(o.value), xonly: o.xonly, spentHeight: o.spent_height })),
      );
    },
    async spent(from, to): Promise<StoredSpent[]> {
      const rows = await run<{ height: number; txid: Buffer; vout: number; spender: Buffer }>(handle(), 'spentRows', [from, to]);
      return rows.map((r) => ({ height: r.height, txid: r.txid.toString('hex'), vout: r.vout, spender: r.spender.toString('hex') }));
    },
    async size(): Promise<StoreSize> {
      const { rows } = await handle().query<{ blocks: string; txs: string; bytes: string }>(
        `SELECT (SELECT COUNT(*) FROM idx_blocks) AS blocks, (SELECT COUNT(*) FROM idx_txs) AS txs,
         (SELECT SUM(pg_total_relation_size(t)) FROM unnest(ARRAY['idx_blocks','idx_txs','idx_outputs','idx_spent']) AS t) AS bytes`,
      );
      const row = rows[0]!;
      return { blocks: Number(row.blocks), txs: Number(row.txs), bytes: Number(row.bytes) };
    },
    async close() {
      const p = pool;
      pool = undefined;
      await p?.end();
    },
  };
}
