import type { BlockRecord, IndexedOutput, SpentOutpoint } from './block-record';

/** A block of the index, without its transactions. */
export interface StoredBlock {
  height: number;
  hash: string;
  header: Uint8Array;
  time: number;
  newOutputsFilter: Uint8Array;
  spentFilter: Uint8Array;
}

/** A taproot output of an indexed transaction, with the height of the block that spent it (null: unspent). */
export interface StoredOutput extends IndexedOutput {
  spentHeight: number | null;
}

/** An indexed transaction as read back. */
export interface StoredTx {
  height: number;
  txid: string;
  tweak: Uint8Array;
  outputs: StoredOutput[];
}

/** A spent taproot outpoint as read back, with the height of the spending block. */
export interface StoredSpent extends SpentOutpoint {
  height: number;
}

/** Rows and bytes the index holds (the benchmark's "bytes per indexed transaction"). */
export interface StoreSize {
  blocks: number;
  txs: number;
  bytes: number;
}

/**
 * The tweak index's storage, one interface over SQLite and PostgreSQL (docs/silent-payments.md,
 * "The tweak index (light wallets)"). Every write is one transaction: a block is all there or not at all.
 */
export interface TweakIndexStore {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Opens the database and creates the tables when missing. `rebuilt`: it held the index in the
   * row-per-transaction layout of earlier versions, which is dropped (the index is built again
   * from the node, from its start height).
   */
  open(): Promise<{ rebuilt: boolean }>;
  /**
   * Adds one block: its transactions with their outputs and its spent outpoints, each packed in
   * one value (packed-block.ts), the spends also by outpoint (what gives an output its spent
   * height), and its filters.
   */
  applyBlock(record: BlockRecord): Promise<void>;
  /** Removes the block at `height` and every block above it, and un-spends what they spent. */
  rollback(height: number): Promise<void>;
  /** The highest block indexed, or undefined when empty. */
  tip(): Promise<{ height: number; hash: string } | undefined>;
  /** The lowest block indexed, or undefined when empty. */
  firstHeight(): Promise<number | undefined>;
  /** The blocks from `from` to `to` (inclusive) that are indexed, ascending. */
  blocks(from: number, to: number): Promise<StoredBlock[]>;
  /** The indexed transactions of the blocks `from`…`to`, by height then position in the block. */
  txs(from: number, to: number): Promise<StoredTx[]>;
  /** The spent taproot outpoints of the blocks `from`…`to`, by height then position. */
  spent(from: number, to: number): Promise<StoredSpent[]>;
  /** The spend of the output `txid:vout` created at `outHeight`: the spending block's height and transaction, or undefined while unspent. */
  spendOf(outHeight: number, txid: string, vout: number): Promise<{ height: number; spender: string } | undefined>;
  /** What the index holds. */
  size(): Promise<StoreSize>;
  close(): Promise<void>;
}

/** Hex (display order) to bytes. */
export function hexBytes(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

/** The tables of the row-per-transaction layout of earlier versions (`open` drops them). */
export const OLD_LAYOUT_TABLES = ['idx_txs', 'idx_outputs', 'idx_spent', 'idx_blocks'] as const;
