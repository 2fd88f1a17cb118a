import { computeTweaks, scanInputsFromRpc, type AnySecp256k1Backend } from '@repo/bip352';
import { readTaprootOutputs, type RpcBlockTx } from './block-record';
import type { StoredTx } from './store';

/** Mempool transactions the index holds at most; past it new ones are not indexed until some leave. */
export const MEMPOOL_MAX_TXS = 100_000;

/**
 * The mempool part of the index (docs/silent-payments.md, "The tweak index (light wallets)"):
 * each eligible mempool transaction with a taproot output, its tweak and outputs, in memory only
 * (the mempool is the node's; after a restart the scanner's first pass reads it again). Rows are
 * read back as index rows at height 0, Electrum's height of an unconfirmed transaction.
 */
export interface MempoolIndex {
  /**
   * Indexes transactions seen in the mempool (`getrawtransaction` verbosity 2, or verbosity 1
   * with each input's `prevout` filled in); those without a taproot output or not eligible are
   * left out. Returns the txids added.
   */
  add(txs: readonly RpcBlockTx[]): string[];
  /** Keeps only the transactions in `current` (the node's mempool now): the others were mined, replaced or evicted. */
  keep(current: ReadonlySet<string>): void;
  /** Forgets the transactions of a block just indexed (mined). */
  mined(txids: Iterable<string>): void;
  /** The rows of `txids` still held, or of every transaction held. */
  rows(txids?: Iterable<string>): StoredTx[];
  has(txid: string): boolean;
  readonly size: number;
}

/** The mempool index; `backend` computes the tweaks. */
export function createMempoolIndex(backend: () => AnySecp256k1Backend): MempoolIndex {
  const held = new Map<string, StoredTx>();
  return {
    add(txs) {
      const fresh = txs.filter((tx) => !held.has(tx.txid.toLowerCase()) && Array.isArray(tx?.vin) && Array.isArray(tx.vout));
      const candidates: Array<{ tx: RpcBlockTx; outputs: StoredTx['outputs'] }> = [];
      for (const tx of fresh) {
        try {
          const outputs = readTaprootOutputs(tx, `mempool tx ${tx.txid}`).map((o) => ({ ...o, spentHeight: null }));
          if (outputs.length > 0 && tx.vin.every((vin) => typeof vin.coinbase !== 'string')) candidates.push({ tx, outputs });
        } catch {
          // an output whose value is no amount: not a transaction a node relays
        }
      }
      const inputs = candidates.map(({ tx }) => {
        try {
          return scanInputsFromRpc(tx.vin);
        } catch {
          return []; // a prevout missing: not eligible as far as the index can tell
        }
      });
      const added: string[] = [];
      computeTweaks(inputs, backend()).forEach((tweak, i) => {
        if (tweak === null || held.size >= MEMPOOL_MAX_TXS) return;
        const { tx, outputs } = candidates[i]!;
        const txid = tx.txid.toLowerCase();
        held.set(txid, { height: 0, txid, tweak, outputs });
        added.push(txid);
      });
      return added;
    },
    keep(current) {
      for (const txid of held.keys()) if (!current.has(txid)) held.delete(txid);
    },
    mined(txids) {
      for (const txid of txids) held.delete(txid.toLowerCase());
    },
    rows(txids) {
      if (txids === undefined) return [...held.values()];
      const rows: StoredTx[] = [];
      for (const txid of txids) {
        const row = held.get(txid);
        if (row !== undefined) rows.push(row);
      }
      return rows;
    },
    has: (txid) => held.has(txid),
    get size() {
      return held.size;
    },
  };
}
