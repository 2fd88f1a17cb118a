import type { StoredTx } from '../store';

/** An indexed transaction that pays the wallet: Frigate's history entry, with the outputs found. */
export interface RemoteMatch {
  height: number;
  txid: string;
  /** The transaction's tweak (input_hash·A, 33 bytes compressed, hex): Frigate's `tweak_key`. */
  tweak: string;
  /** The outputs of the transaction that pay the wallet (vout, x-only key hex, sats). */
  outputs: Array<{ vout: number; xonly: string; value: bigint }>;
}

/**
 * Index rows as a scan job carries them to a worker, in three buffers it can move without a copy:
 * each row's tweak (33 bytes), its output keys (32 bytes each) one row after the other, and each
 * row's count of outputs.
 */
export interface PackedRows {
  tweaks: Uint8Array<ArrayBuffer>;
  xs: Uint8Array<ArrayBuffer>;
  counts: Uint32Array<ArrayBuffer>;
}

/** Packs `rows` for a worker. */
export function packRows(rows: readonly StoredTx[]): PackedRows {
  let outputs = 0;
  for (const row of rows) outputs += row.outputs.length;
  const tweaks = new Uint8Array(33 * rows.length);
  const xs = new Uint8Array(32 * outputs);
  const counts = new Uint32Array(rows.length);
  let at = 0;
  rows.forEach((row, i) => {
    tweaks.set(row.tweak, 33 * i);
    counts[i] = row.outputs.length;
    for (const o of row.outputs) {
      xs.set(o.xonly, at);
      at += 32;
    }
  });
  return { tweaks, xs, counts };
}

/**
 * What a worker found, as pairs (row, output position among the row's outputs), back into the
 * transactions that pay the wallet, in the rows' order, each with its outputs by vout.
 */
export function matchesOf(rows: readonly StoredTx[], hits: Uint32Array): RemoteMatch[] {
  const byRow = new Map<number, RemoteMatch>();
  for (let i = 0; i + 1 < hits.length; i += 2) {
    const row = rows[hits[i]!]!;
    const output = row.outputs[hits[i + 1]!]!;
    let match = byRow.get(hits[i]!);
    if (match === undefined) {
      match = { height: row.height, txid: row.txid, tweak: Buffer.from(row.tweak).toString('hex'), outputs: [] };
      byRow.set(hits[i]!, match);
    }
    match.outputs.push({ vout: output.vout, xonly: Buffer.from(output.xonly).toString('hex'), value: output.value });
  }
  const matches = [...byRow.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
  for (const m of matches) m.outputs.sort((a, b) => a.vout - b.vout);
  return matches;
}
