import type { EventEmitter } from 'node:events';
import type { TweakIndexerEvents } from '../indexer';
import type { StoredTx, TweakIndexStore } from '../store';

/** Ranges kept: a new block's, and a few before it for subscriptions a block behind. */
const KEPT = 4;

/**
 * The index rows of the heights live subscriptions scan, read from the store once for all of them:
 * a new block's rows are what every live wallet scans, and a read per wallet (a hundred wallets, a
 * hundred reads of the same block on the main thread) held back every notification, the headers'
 * too. Cleared by a rollback; the rows are shared, read-only.
 */
export interface SharedRows {
  txs(from: number, to: number): Promise<StoredTx[]>;
  /** Stops following the indexer's rollbacks and forgets the rows. */
  close(): void;
}

/** Shared rows of `store`, cleared on the indexer's `rollback` events. */
export function createSharedRows(store: TweakIndexStore, events: EventEmitter<TweakIndexerEvents>): SharedRows {
  const kept = new Map<string, Promise<StoredTx[]>>();
  const clear = (): void => kept.clear();
  events.on('rollback', clear);
  return {
    txs(from, to) {
      const key = `${from}-${to}`;
      let rows = kept.get(key);
      if (rows === undefined) {
        rows = store.txs(from, to);
        rows.catch(() => kept.delete(key));
        kept.set(key, rows);
        if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
      }
      return rows;
    },
    close() {
      events.off('rollback', clear);
      clear();
    },
  };
}
