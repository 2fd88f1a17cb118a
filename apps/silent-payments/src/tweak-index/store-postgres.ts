import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { BlockRecord } from './block-record';
import { packSpent, packTxs, spendIn, unpackBlocks, unpackSpent } from './packed-block';
import {
  hexBytes,
  OLD_LAYOUT_TABLES,
  type StoredBlock,
  type StoredSpent,
  type StoredTx,
  type StoreSize,
  type TweakIndexStore,
} from './store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idx_blocks (
  height INTEGER PRIMARY KEY, hash BYTEA NOT NULL, header BYTEA NOT NULL, time BIGINT NOT NULL,
  new_filter BYTEA NOT NULL, spent_filter BYTEA NOT NULL, tx_count INTEGER NOT NULL, txs BYTEA NOT NULL, spent BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS idx_spends (
  out_height INTEGER NOT NULL, txid BYTEA NOT NULL, vout INTEGER NOT NULL, height INTEGER NOT NULL,
  PRIMARY KEY (out_height, txid, vout)
);
`;

/**
 * The packed values of idx_blocks stored as they are: keys, tweaks and hashes do not compress,
 * and PostgreSQL's default (EXTENDED) tried to compress each block's hundreds of kilobytes before
 * storing them anyway, which cost the server more CPU than the insert.
 */
const PACKED_COLUMNS = ['new_filter', 'spent_filter', 'txs', 'spent'];
const COMPRESSED_COLUMNS = `SELECT attname FROM pg_attribute WHERE attrelid = 'idx_blocks'::regclass AND attname = ANY($1) AND attstorage <> 'e'`;
const UNCOMPRESSED = (columns: string[]): string =>
  `ALTER TABLE idx_blocks ${columns.map((column) => `ALTER COLUMN ${column} SET STORAGE EXTERNAL`).join(', ')}`;

/** An advisory lock key: servers opening the index at once (creating or replacing its tables) wait for each other. */
const SCHEMA_LOCK = 352_002;

/** Connections the pool opens at most (reads of the protocols and the indexer's writes share it). */
export const POSTGRES_POOL_SIZE = 8;

/** Named statements: prepared once per connection by node-postgres, then executed by name. */
const SQL = {
  block:
    'INSERT INTO idx_blocks (height, hash, header, time, new_filter, spent_filter, tx_count, txs, spent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
  spends:
    'INSERT INTO idx_spends (out_height, txid, vout, height) SELECT o, t, v, $1 FROM unnest($2::int[], $3::bytea[], $4::int[]) AS u(o, t, v)',
  spentAbove: 'SELECT height, spent FROM idx_blocks WHERE height >= $1',
  unspend:
    'DELETE FROM idx_spends s USING unnest($1::int[], $2::bytea[], $3::int[]) AS u(o, t, v) WHERE s.out_height = u.o AND s.txid = u.t AND s.vout = u.v',
  dropBlocks: 'DELETE FROM idx_blocks WHERE height >= $1',
  tip: 'SELECT height, hash FROM idx_blocks ORDER BY height DESC LIMIT 1',
  first: 'SELECT MIN(height) AS h FROM idx_blocks',
  blocks: 'SELECT height, hash, header, time, new_filter, spent_filter FROM idx_blocks WHERE height BETWEEN $1 AND $2 ORDER BY height',
  txBlobs: 'SELECT height, txs FROM idx_blocks WHERE height BETWEEN $1 AND $2 ORDER BY height',
  spendsOf: 'SELECT txid, vout, height FROM idx_spends WHERE out_height BETWEEN $1 AND $2',
  spentBlobs: 'SELECT height, spent FROM idx_blocks WHERE height BETWEEN $1 AND $2 ORDER BY height',
  spendOf:
    'SELECT b.height, b.spent FROM idx_spends s JOIN idx_blocks b ON b.height = s.height WHERE s.out_height = $1 AND s.txid = $2 AND s.vout = $3',
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
      r.txs.length,
      packTxs(r.txs),
      packSpent(r.spent),
    ]);
    if (r.spent.length === 0) return;
    await run(c, 'spends', [r.height, r.spent.map((s) => s.outHeight), r.spent.map((s) => hexBytes(s.txid)), r.spent.map((s) => s.vout)]);
  };

  const rollback = async (c: PoolClient, height: number): Promise<void> => {
    const spent = (await run<{ height: number; spent: Buffer }>(c, 'spentAbove', [height])).flatMap((r) => unpackSpent(r.height, r.spent));
    if (spent.length > 0) {
      await run(c, 'unspend', [spent.map((s) => s.outHeight), spent.map((s) => hexBytes(s.txid)), spent.map((s) => s.vout)]);
    }
    await run(c, 'dropBlocks', [height]);
  };

  return {
    kind: 'postgres',
    async open() {
      pool = new Pool({ connectionString: url, max: POSTGRES_POOL_SIZE });
      // A connection that fails while idle must not crash the process; the next query reports it.
      pool.on('error', () => undefined);
      let rebuilt = false;
      try {
        await inTransaction(async (c) => {
          await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
          // The row-per-transaction layout of earlier versions: dropped, the index is built again from the node.
          rebuilt = (await c.query<{ old: string | null }>("SELECT to_regclass('idx_txs') AS old")).rows[0]?.old != null;
          if (rebuilt) await c.query(`DROP TABLE IF EXISTS ${OLD_LAYOUT_TABLES.join(', ')}`);
          await c.query(SCHEMA);
          // on an index made before (its rows written from now on), and at once on a new one
          const compressed = (await c.query<{ attname: string }>(COMPRESSED_COLUMNS, [PACKED_COLUMNS])).rows.map((r) => r.attname);
          if (compressed.length > 0) await c.query(UNCOMPRESSED(compressed));
        });
      } catch (error) {
        const failed = pool;
        pool = undefined;
        await failed.end();
        throw error;
      }
      return { rebuilt };
    },
    async applyBlock(record) {
      await inTransaction((c) => apply(c, record));
    },
    async rollback(height) {
      await inTransaction((c) => rollback(c, height));
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
      const [blocks, spends] = await Promise.all([
        run<{ height: number; txs: Buffer }>(handle(), 'txBlobs', [from, to]),
        run<{ txid: Buffer; vout: number; height: number }>(handle(), 'spendsOf', [from, to]),
      ]);
      return unpackBlocks(blocks, spends);
    },
    async spent(from, to): Promise<StoredSpent[]> {
      const rows = await run<{ height: number; spent: Buffer }>(handle(), 'spentBlobs', [from, to]);
      return rows.flatMap((r) => unpackSpent(r.height, r.spent));
    },
    async spendOf(outHeight, txid, vout) {
      const [row] = await run<{ height: number; spent: Buffer }>(handle(), 'spendOf', [outHeight, hexBytes(txid), vout]);
      return row === undefined ? undefined : spendIn(row.height, row.spent, txid, vout);
    },
    async size(): Promise<StoreSize> {
      const { rows } = await handle().query<{ blocks: string; txs: string; bytes: string }>(
        `SELECT COUNT(*) AS blocks, COALESCE(SUM(tx_count), 0) AS txs,
         pg_total_relation_size('idx_blocks') + pg_total_relation_size('idx_spends') AS bytes FROM idx_blocks`,
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
