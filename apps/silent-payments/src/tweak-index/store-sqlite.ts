import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
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
  height INTEGER PRIMARY KEY, hash BLOB NOT NULL, header BLOB NOT NULL, time INTEGER NOT NULL,
  new_filter BLOB NOT NULL, spent_filter BLOB NOT NULL, tx_count INTEGER NOT NULL, txs BLOB NOT NULL, spent BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS idx_spends (
  out_height INTEGER NOT NULL, txid BLOB NOT NULL, vout INTEGER NOT NULL, height INTEGER NOT NULL,
  PRIMARY KEY (out_height, txid, vout)
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
    stmt(
      'INSERT INTO idx_blocks (height, hash, header, time, new_filter, spent_filter, tx_count, txs, spent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      r.height,
      hexBytes(r.hash),
      Buffer.from(r.header),
      r.time,
      Buffer.from(r.newOutputsFilter),
      Buffer.from(r.spentFilter),
      r.txs.length,
      packTxs(r.txs),
      packSpent(r.spent),
    );
    const spend = stmt('INSERT INTO idx_spends (out_height, txid, vout, height) VALUES (?, ?, ?, ?)');
    for (const s of r.spent) spend.run(s.outHeight, hexBytes(s.txid), s.vout, r.height);
  };

  const rollback = (height: number): void => {
    const unspend = stmt('DELETE FROM idx_spends WHERE out_height = ? AND txid = ? AND vout = ?');
    for (const row of stmt('SELECT height, spent FROM idx_blocks WHERE height >= ?').all(height) as Array<{
      height: number;
      spent: Buffer;
    }>) {
      for (const s of unpackSpent(row.height, row.spent)) unspend.run(s.outHeight, hexBytes(s.txid), s.vout);
    }
    stmt('DELETE FROM idx_blocks WHERE height >= ?').run(height);
  };

  return {
    kind: 'sqlite',
    async open() {
      mkdirSync(dirname(file), { recursive: true });
      db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const d = db;
      // The row-per-transaction layout of earlier versions: dropped, the index is built again from the node.
      const rebuilt = d
        .transaction(() => {
          const old = d.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'idx_txs'").get() !== undefined;
          if (old) d.exec(`DROP TABLE IF EXISTS ${OLD_LAYOUT_TABLES.join('; DROP TABLE IF EXISTS ')}`);
          d.exec(SCHEMA);
          return old;
        })
        .immediate();
      return Promise.resolve({ rebuilt });
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
      const rows = stmt(
        'SELECT height, hash, header, time, new_filter, spent_filter FROM idx_blocks WHERE height BETWEEN ? AND ? ORDER BY height',
      ).all(from, to) as BlockRow[];
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
      const blocks = stmt('SELECT height, txs FROM idx_blocks WHERE height BETWEEN ? AND ? ORDER BY height').all(from, to) as Array<{
        height: number;
        txs: Buffer;
      }>;
      const spends = stmt('SELECT txid, vout, height FROM idx_spends WHERE out_height BETWEEN ? AND ?').all(from, to) as Array<{
        txid: Buffer;
        vout: number;
        height: number;
      }>;
      return Promise.resolve(unpackBlocks(blocks, spends));
    },
    async spent(from, to): Promise<StoredSpent[]> {
      const rows = stmt('SELECT height, spent FROM idx_blocks WHERE height BETWEEN ? AND ? ORDER BY height').all(from, to) as Array<{
        height: number;
        spent: Buffer;
      }>;
      return Promise.resolve(rows.flatMap((r) => unpackSpent(r.height, r.spent)));
    },
    async spendOf(outHeight, txid, vout) {
      const row = stmt(
        'SELECT b.height, b.spent FROM idx_spends s JOIN idx_blocks b ON b.height = s.height WHERE s.out_height = ? AND s.txid = ? AND s.vout = ?',
      ).get(outHeight, hexBytes(txid), vout) as { height: number; spent: Buffer } | undefined;
      return Promise.resolve(row === undefined ? undefined : spendIn(row.height, row.spent, txid, vout));
    },
    async size(): Promise<StoreSize> {
      const counts = stmt('SELECT COUNT(*) AS blocks, COALESCE(SUM(tx_count), 0) AS txs FROM idx_blocks').get() as StoreSize;
      const pages = Number(handle().pragma('page_count', { simple: true }));
      const pageSize = Number(handle().pragma('page_size', { simple: true }));
      return Promise.resolve({ blocks: counts.blocks, txs: counts.txs, bytes: pages * pageSize });
    },
    async close() {
      prepared.clear();
      db?.close();
      db = undefined;
      await Promise.resolve();
    },
  };
}
