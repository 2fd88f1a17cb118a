import { computeTweaks, scanInputsFromRpc, type AnySecp256k1Backend } from '@repo/bip352';
import { readTaprootOutputs, withTweaks, type IndexCandidate, type RpcBlockTx } from './block-record';
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
  /** Keeps only the transactions in `current` (the node's mempool now): the others were mined, replaced or evicted. Returns the txids dropped. */
  keep(current: ReadonlySet<string>): string[];
  /** Forgets the transactions of a block just indexed (mined). */
  mined(txids: Iterable<string>): void;
  /** Every transaction held, as index rows at height 0. */
  rows(): StoredTx[];
  /** The transaction's row (height 0), or undefined when it is not held. */
  get(txid: string): StoredTx | undefined;
  has(txid: string): boolean;
}

/** The mempool index; `backend` computes the tweaks. */
export function createMempoolIndex(backend: () => AnySecp256k1Backend): MempoolIndex {
  const held = new Map<string, StoredTx>();
  return {
    add(txs) {
      const candidates: IndexCandidate[] = [];
      for (const tx of txs) {
        const txid = typeof tx?.txid === 'string' ? tx.txid.toLowerCase() : undefined;
        if (txid === undefined || held.has(txid) || !Array.isArray(tx.vin) || !Array.isArray(tx.vout)) continue;
        try {
          const outputs = readTaprootOutputs(tx, `mempool tx ${txid}`);
          if (outputs.length > 0) candidates.push({ txid, outputs, inputs: scanInputsFromRpc(tx.vin) });
        } catch {
          // an output whose value is no amount, or an input's prevout unknown: left for its block
        }
      }
      const added: string[] = [];
      // On this thread: a pass brings a few new transactions, not a block's thousands.
      const tweaks = computeTweaks(
        candidates.map((c) => c.inputs),
        backend(),
      );
      for (const tx of withTweaks(candidates, tweaks)) {
        if (held.size >= MEMPOOL_MAX_TXS) break;
        held.set(tx.txid, { height: 0, ...tx, outputs: tx.outputs.map((o) => ({ ...o, spentHeight: null })) });
        added.push(tx.txid);
      }
      return added;
    },
    keep(current) {
      const gone = [...held.keys()].filter((txid) => !current.has(txid));
      for (const txid of gone) held.delete(txid);
      return gone;
    },
    mined(txids) {
      for (const txid of txids) held.delete(txid.toLowerCase());
    },
    rows: () => [...held.values()],
    get: (txid) => held.get(txid),
    has: (txid) => held.has(txid),
  };
}
