import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { BlockRecord } from './block-record';
import { groupOutputs, hexBytes, type StoredBlock, type StoredSpent, type StoredTx, type StoreSize, type TweakIndexStore } from './store';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idx_blocks (
  height INTEGER PRIMARY KEY, hash BLOB NOT NULL, header BLOB NOT NULL, time INTEGER NOT NULL,
  new_filter BLOB NOT NULL, spent_filter BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS idx_txs (
  height INTEGER NOT NULL, pos INTEGER NOT NULL, txid BLOB NOT NULL, tweak BLOB NOT NULL, PRIMARY KEY (height, pos)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idx_outputs (
  txid BLOB NOT NULL, vout INTEGER NOT NULL, height INTEGER NOT NULL, value INTEGER NOT NULL, xonly BLOB NOT NULL,
  spent_height INTEGER, PRIMARY KEY (txid, vout)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_outputs_height ON idx_outputs (height);
CREATE INDEX IF NOT EXISTS idx_outputs_spent ON idx_outputs (spent_height) WHERE spent_height IS NOT NULL;
CREATE TABLE IF NOT EXISTS idx_spent (
  height INTEGER NOT NULL, pos INTEGER NOT NULL, txid BLOB NOT NULL, vout INTEGER NOT NULL, spender BLOB NOT NULL,
  PRIMARY KEY (height, pos)
) WITHOUT ROWID;
`;

interface BlockRow {
  height: number;
  hash: Buffer;
  header: Buffer;
  time: number;
  new_filter: Buffer;
  spent_filter: Buffer;
}

/** The tweak index in an SQLite file (better-sqlite3, WAL), the default store (docs/silent-payments.md, "The tweak index (light wallets)"). */
export function createSqliteIndexStore(file: string): TweakIndexStore {
  let db: Database.Database | undefined;
  const handle = (): Database.Database => {
    if (db === undefined) throw new Error('the tweak index store is not open');
    return db;
  };
  const prepared = new Map<string, Database.Statement>();
  const stmt = (sql: string): Database.Statement => {
    let s = prepared.get(sql);
    if (s === undefined) {
      s = handle().prepare(sql);
      prepared.set(sql, s);
    }
    return s;
  };

  const apply = (r: BlockRecord): void => {
    stmt('INSERT INTO idx_blocks (height, hash, header, time, new_filter, spent_filter) VALUES (?, ?, ?, ?, ?, ?)').run(
      r.height,
      hexBytes(r.hash),
      Buffer.from(r.header),
      r.time,
      Buffer.from(r.newOutputsFilter),
      Buffer.from(r.spentFilter),
    );
    const tx = stmt('INSERT INTO idx_txs (height, pos, txid, tweak) VALUES (?, ?, ?, ?)');
    const out = stmt('INSERT OR REPLACE INTO idx_outputs (txid, vout, height, value, xonly, spent_height) VALUES (?, ?, ?, ?, ?, NULL)');
    for (const [pos, t] of r.txs.entries()) {
      const txid = hexBytes(t.txid);
      tx.run(r.height, pos, txid, Buffer.from(t.tweak));
      for (const o of t.outputs) out.run(txid, o.vout, r.height, o.value, Buffer.from(o.xonly));
    }
    const spent = stmt('INSERT INTO idx_spent (height, pos, txid, vout, spender) VALUES (?, ?, ?, ?, ?)');
    const mark = stmt('UPDATE idx_outputs SET spent_height = ? WHERE txid = ? AND vout = ?');
    for (const [pos, s] of r.spent.entries()) {
      const txid = hexBytes(s.txid);
      spent.run(r.height, pos, txid, s.vout, hexBytes(s.spender));
      mark.run(r.height, txid, s.vout);
    }
  };

  const rollback = (height: number): void => {
    stmt('DELETE FROM idx_outputs WHERE height >= ?').run(height);
    stmt('UPDATE idx_outputs SET spent_height = NULL WHERE spent_height >= ?').run(height);
    stmt('DELETE FROM idx_txs WHERE height >= ?').run(height);
    stmt('DELETE FROM idx_spent WHERE height >= ?').run(height);
    stmt('DELETE FROM idx_blocks WHERE height >= ?').run(height);
  };

  return {
    kind: 'sqlite',
    async open() {
      mkdirSync(dirname(file), { recursive: true });
      db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(SCHEMA);
      await Promise.resolve();
    },
    async applyBlock(record) {
      handle().transaction(apply).immediate(record);
      await Promise.resolve();
    },
    async rollback(height) {
      handle().transaction(rollback).immediate(height);
      await Promise.resolve();
    },
    async tip() {
      const row = stmt('SELECT height, hash FROM idx_blocks ORDER BY height DESC LIMIT 1').get() as
        { height: number; hash: Buffer } | undefined;
      return Promise.resolve(row && { height: row.height, hash: row.hash.toString('hex') });
    },
    async firstHeight() {
      const row = stmt('SELECT MIN(height) AS h FROM idx_blocks').get() as { h: number | null };
      return Promise.resolve(row.h ?? undefined);
    },
    async blocks(from, to): Promise<StoredBlock[]> {
      const rows = stmt('SELECT * FROM idx_blocks WHERE height BETWEEN ? AND ? ORDER BY height').all(from, to) as BlockRow[];
      return Promise.resolve(
        rows.map((r) => ({
          height: r.height,
          hash: r.hash.toString('hex'),
          header: Uint8Array.from(r.header),
          time: r.time,
          newOutputsFilter: Uint8Array.from(r.new_filter),
          spentFilter: Uint8Array.from(r.spent_filter),
        })),
      );
    },
    async txs(from, to): Promise<StoredTx[]> {
      const txRows = stmt('SELECT height, pos, txid, tweak FROM idx_txs WHERE height BETWEEN ? AND ? ORDER BY height, pos').all(
        from,
        to,
      ) as Array<{
        height: number;
        pos: number;
        txid: Buffer;
        tweak: Buffer;
      }>;
      const outRows = stmt(
        'SELECT txid, vout, value, xonly, spent_height AS spentHeight FROM idx_outputs WHERE height BETWEEN ? AND ? ORDER BY height, txid, vout',
      ).all(from, to) as Array<{ txid: Buffer; vout: number; value: number; xonly: Buffer; spentHeight: number | null }>;
      return Promise.resolve(
        groupOutputs(
          txRows,
          outRows.map((o) => ({ ...o, value: BigInt(o.value) })),
        ),
      );
    },
    async spent(from, to): Promise<StoredSpent[]> {
      const rows = stmt('SELECT height, txid, vout, spender FROM idx_spent WHERE height BETWEEN ? AND ? ORDER BY height, pos').all(
        from,
        to,
      ) as Array<{
        height: number;
        txid: Buffer;
        vout: number;
        spender: Buffer;
      }>;
      return Promise.resolve(
        rows.map((r) => ({ height: r.height, txid: r.txid.toString('hex'), vout: r.vout, spender: r.spender.toString('hex') })),
      );
    },
    async size(): Promise<StoreSize> {
      const count = (table: string): number => (stmt(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
      const pages = Number(handle().pragma('page_count', { simple: true }));
      const pageSize = Number(handle().pragma('page_size', { simple: true }));
      return Promise.resolve({ blocks: count('idx_blocks'), txs: count('idx_txs'), bytes: pages * pageSize });
    },
    async close() {
      prepared.clear();
      db?.close();
      db = undefined;
      await Promise.resolve();
    },
  };
}
