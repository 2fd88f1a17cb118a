import type { LabelRecord, PaymentRecord, PaymentStatus } from './store';

/** How many payments removed by reorgs the store remembers the first sighting of ({@link createFirstSeen}). */
export const REORG_MEMORY = 10_000;

/** The outpoint id of a payment. */
export function paymentId(txid: string, vout: number): string {
  return `${txid}:${vout}`;
}

/** A payment as both backends' tables hold it (integers may come back as bigint or, from PostgreSQL, as strings). */
export interface PaymentRow {
  id: string;
  txid: string;
  vout: number | bigint;
  address: string;
  label_m: number | bigint | null;
  amount_sats: bigint | string | number;
  block_height: number | bigint | null;
  block_hash: string | null;
  status: PaymentStatus;
  created_at: string;
  output_key: string;
  tweak: string;
  spent_txid: string | null;
  spent_height: number | bigint | null;
}

/** A label as both backends' tables hold it. */
export interface LabelRow {
  m: number | bigint;
  label: string;
  address: string;
  amount_sats: bigint | string | number;
  created_at: string;
}

/** The columns of a payment row an insert gives, and those a read returns. */
export const INSERT_COLUMNS =
  'id, txid, vout, address, label_m, amount_sats, block_height, block_hash, status, created_at, output_key, tweak';
export const PAYMENT_COLUMNS = `${INSERT_COLUMNS}, spent_txid, spent_height`;
export const LABEL_COLUMNS = 'm, label, address, amount_sats, created_at';
/** Pending first, then the newest block first; within a block, transaction order is not kept, so txid/vout. */
export const ORDER = 'ORDER BY block_height IS NULL DESC, block_height DESC, created_at DESC, txid, vout';

const optional = (v: number | bigint | null): number | null => (v === null ? null : Number(v));

/** A payment row as a record: amounts exact (bigint), heights as numbers. */
export function rowToPayment(row: unknown): PaymentRecord {
  const r = row as PaymentRow;
  return {
    id: r.id,
    txid: r.txid,
    vout: Number(r.vout),
    address: r.address,
    labelM: optional(r.label_m),
    amountSats: BigInt(r.amount_sats),
    blockHeight: optional(r.block_height),
    blockHash: r.block_hash,
    status: r.status,
    createdAt: r.created_at,
    outputKey: r.output_key,
    tweak: r.tweak,
    spentTxid: r.spent_txid,
    spentHeight: optional(r.spent_height),
  };
}

/** A label row as a record. */
export function rowToLabel(row: LabelRow): LabelRecord {
  return { m: Number(row.m), label: row.label, address: row.address, amountSats: BigInt(row.amount_sats), createdAt: row.created_at };
}

/** The totals of a label from its payments (id, status, amount), in the store's order. */
export function totalsOf(rows: ReadonlyArray<{ id: string; status: PaymentStatus; amount_sats: bigint | string | number }>) {
  let received = 0n;
  let pending = 0n;
  const payments: string[] = [];
  for (const row of rows) {
    payments.push(row.id);
    if (row.status === 'confirmed') received += BigInt(row.amount_sats);
    else pending += BigInt(row.amount_sats);
  }
  return { received, pending, payments };
}

/**
 * When the payments a reorg removed were first seen, for when they come back (mined again or
 * back in the mempool): `created_at` stays the first sighting. In memory, the most recent
 * REORG_MEMORY of them; after a restart in between, a payment that comes back is seen anew.
 */
export function createFirstSeen() {
  const firstSeen = new Map<string, string>();
  return {
    /** The first sighting of payment `id`, or `now` when none is remembered. */
    of: (id: string, now: string): string => firstSeen.get(id) ?? now,
    /** Remembers the sightings of payments a reorg removed, forgetting the oldest past REORG_MEMORY. */
    remember(removed: readonly PaymentRecord[]): void {
      for (const p of removed) {
        firstSeen.delete(p.id);
        firstSeen.set(p.id, p.createdAt);
      }
      for (const id of firstSeen.keys()) {
        if (firstSeen.size <= REORG_MEMORY) break;
        firstSeen.delete(id);
      }
    },
  };
}

/** The identity mismatch's message (`where`: what to change, e.g. "use another DATA_DIR"). */
export function identityMismatch(key: string, database: string, where: string): string {
  return `the database in ${database} was made for another ${key === 'network' ? 'network (SP_NETWORK)' : 'key set (SP_SCAN_KEY/SP_SPEND_PUBKEY)'}; ${where}`;
}
