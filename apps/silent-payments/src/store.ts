import { AppError } from '@repo/errors';
import type { Logger } from '@repo/service';
import { openPostgresStore } from './store-postgres';
import { openStore } from './store-sqlite';

export { openStore, SCHEMA_VERSION } from './store-sqlite';
export { paymentId, REORG_MEMORY } from './store-rows';

/** A label handed out by `POST /generate-address` (BIP-352 label index m ≥ 1). */
export interface LabelRecord {
  m: number;
  label: string;
  address: string;
  amountSats: bigint;
  createdAt: string;
}

/** `pending` while only in the mempool, `confirmed` once in a block of the best chain. */
export type PaymentStatus = 'pending' | 'confirmed';

/** One output paid to the service. */
export interface PaymentRecord {
  /** `<txid>:<vout>`: the outpoint, stable from mempool to block and across reorgs. */
  id: string;
  txid: string;
  vout: number;
  /** The silent-payment address that was paid (labelled when a label matched). */
  address: string;
  /** The label index that matched: null for the unlabelled address, 0 for change. */
  labelM: number | null;
  amountSats: bigint;
  blockHeight: number | null;
  blockHash: string | null;
  status: PaymentStatus;
  createdAt: string;
  /** The x-only output key and the BIP-352 tweak t_k (hex), what a wallet needs to spend it. */
  outputKey: string;
  tweak: string;
  /** The transaction spending this output (in the mempool or in a block), null while unspent. */
  spentTxid: string | null;
  /** The height of the block holding the spend; null while unspent or spent in the mempool only. */
  spentHeight: number | null;
}

/** A payment found by the scanner, before it is stored. */
export type NewPayment = Omit<PaymentRecord, 'id' | 'createdAt' | 'status' | 'blockHeight' | 'blockHash' | 'spentTxid' | 'spentHeight'>;

/** Filters of {@link Store.listPayments} (`GET /payments`). */
export interface PaymentFilter {
  status?: PaymentStatus | undefined;
  spent?: boolean | undefined;
  /** A label index m (label_m); undefined: any. */
  labelM?: number | undefined;
}

/** Totals in satoshis (`GET /balance`). */
export interface BalanceTotals {
  /** Confirmed outputs with no spend seen. */
  confirmed: bigint;
  /** Mempool outputs with no spend seen. */
  pending: bigint;
  /** Outputs (confirmed or not) whose spend is in the mempool only. */
  spentPending: bigint;
  /** Outputs counted in confirmed and pending. */
  utxoCount: number;
}

/** An output spent by a transaction: `<txid>:<vout>` of the spent output and the spender. */
export interface SpendSeen {
  id: string;
  spentTxid: string;
}

/** A label's totals in satoshis (an invoice, `GET /labels/{label}`). */
export interface LabelTotals {
  received: bigint;
  pending: bigint;
  payments: string[];
}

/** Where the scanner stands. */
export interface ScanProgress {
  /** First height scanned (SP_START_HEIGHT or the tip at first start); undefined before the first start. */
  startHeight: number | undefined;
  /** Last height scanned; startHeight - 1 before any block. */
  scannedHeight: number | undefined;
}

/** Who the service's data belongs to: its network and public keys. */
export interface StoreIdentity {
  network: string;
  scanPub: string;
  spendPub: string;
}

/**
 * The service's data, the same on both backends: labels, payments, scan progress and block
 * hashes. Every read and write returns a promise (SQLite's run synchronously and return settled
 * promises); `progress()` alone answers at once, from what the store holds (the status of
 * `/health`, `/ready` and the metrics is read synchronously).
 */
export interface StoreOperations {
  findLabel(label: string): Promise<LabelRecord | undefined>;
  /** Creates the label with the next index m ≥ 1; `address(m)` gives its address. */
  createLabel(label: string, amountSats: bigint, address: (m: number) => string): Promise<LabelRecord>;
  labels(): Promise<LabelRecord[]>;
  /** The label indexes m ≥ 1 handed out, ascending, compactly (what the scanner needs at start). */
  labelIndexes(): Promise<Uint32Array>;
  labelByIndex(m: number): Promise<LabelRecord | undefined>;
  listPayments(limit: number, offset: number, filter?: PaymentFilter): Promise<PaymentRecord[]>;
  countPayments(filter?: PaymentFilter): Promise<number>;
  /** Labels m ≥ 1, oldest first, paged. */
  listLabels(limit: number, offset: number): Promise<LabelRecord[]>;
  countLabels(): Promise<number>;
  /** Confirmed and mempool totals of label m and its payment ids. */
  labelTotals(m: number): Promise<LabelTotals>;
  balance(): Promise<BalanceTotals>;
  getPayment(id: string): Promise<PaymentRecord | undefined>;
  /** Where the scan stands (held in memory by the store, answered at once). */
  progress(): ScanProgress;
  /** Records the start height and the hash of the block below it (the reorg anchor). */
  initProgress(startHeight: number, anchorHash: string | undefined): Promise<void>;
  blockHash(height: number): Promise<string | undefined>;
  /**
   * Stores a scanned block, its payments (confirmed), the spends of stored outputs among its
   * inputs and the new progress, atomically. Returns the payments stored and the outputs whose
   * spend this block confirmed.
   */
  applyBlock(
    block: { height: number; hash: string },
    payments: NewPayment[],
    spends?: SpendSeen[],
  ): Promise<{ payments: PaymentRecord[]; spent: PaymentRecord[] }>;
  /**
   * Removes the blocks above `height` and their payments, and forgets the spends confirmed
   * above it (those outputs are unspent again until the spend is seen anew); returns the
   * payments removed (as they were) and the number of spends undone.
   */
  rollbackAbove(height: number): Promise<{ removed: PaymentRecord[]; unspent: number }>;
  /** Marks outputs spent by mempool transactions (unspent ones only); returns those newly marked. */
  markSpentPending(spends: SpendSeen[]): Promise<PaymentRecord[]>;
  /** txids of the mempool spends (spent, no block yet). */
  pendingSpendTxids(): Promise<string[]>;
  /** Forgets mempool spends by `txids` (left the mempool unconfirmed); returns the outputs unspent again. */
  clearPendingSpends(txids: string[]): Promise<number>;
  /** Stores payments seen in the mempool (existing ones kept); returns those that are new. */
  addPending(payments: NewPayment[]): Promise<PaymentRecord[]>;
  /** txids of the pending payments. */
  pendingTxids(): Promise<string[]>;
  /** Deletes the pending payments of `txids` (left the mempool without confirming). */
  removePending(txids: string[]): Promise<number>;
}

/**
 * One store transaction (src/scanner/apply.ts: a block's, shared by every block consumer): the
 * store's operations, run inside it. What is written through it commits or rolls back with the
 * transaction; nothing else sees it before the commit. Backend-neutral: on SQLite the one
 * connection, on PostgreSQL one client of the pool between BEGIN and COMMIT/ROLLBACK.
 */
export type BlockTransaction = StoreOperations;

/** The service's store: SQLite under DATA_DIR, or PostgreSQL (`DATABASE_URL`), one contract. */
export interface Store extends StoreOperations {
  readonly kind: 'sqlite' | 'postgres';
  /** Rejects with an Error when the database holds this service's data for other keys or another network. */
  assertIdentity(identity: StoreIdentity): Promise<void>;
  /**
   * Runs `work` in one transaction: committed when its promise resolves, rolled back when it
   * rejects (the rejection is passed on). The store's operations called through `tx` join it;
   * calls on the store itself meanwhile wait for its end on SQLite (one connection), and on
   * PostgreSQL run on other connections without seeing it: never await them inside `work`.
   */
  transaction<T>(work: (tx: BlockTransaction) => Promise<T>): Promise<T>;
  /** Closes the database (PostgreSQL: ends the pool and awaits it). */
  close(): Promise<void>;
}

/** Where the store lives: PostgreSQL when `databaseUrl` is set (the service's rows under `wallet`), else the SQLite file. */
export interface StoreLocation {
  /** The SQLite file (under DATA_DIR), used when `databaseUrl` is unset. */
  sqliteFile: string;
  /** DATABASE_URL: PostgreSQL, shared with the tweak index and other servers. */
  databaseUrl?: string | undefined;
  /** The service's base silent-payment address: the key of its rows in a shared PostgreSQL database. */
  wallet?: string | undefined;
}

/** Opens the store of `location`: PostgreSQL when DATABASE_URL is set, else SQLite (as the index's open-store.ts chooses). */
export async function openStoreAt(location: StoreLocation, logger?: Logger): Promise<Store> {
  if (location.databaseUrl === undefined) return openStore(location.sqliteFile, logger);
  if (location.wallet === undefined) throw new Error('a PostgreSQL store needs the wallet its rows belong to');
  return openPostgresStore(location.databaseUrl, location.wallet);
}

/** A store built without touching the disk or the network: `open()` (the app's `start()`) opens it. */
export interface DeferredStore extends Store {
  /** Opens (SQLite: creating the directory and the file); later calls do nothing. Rejects after `close()`. */
  open(): Promise<void>;
  /** Whether the database is open: after `open()`, before `close()`. */
  readonly isOpen: boolean;
}

/** The store's methods that need the database (all but those answering without it). */
type DatabaseMethod = Exclude<keyof Store, 'progress' | 'close' | 'kind'>;

const DATABASE_METHODS: readonly DatabaseMethod[] = [
  'assertIdentity',
  'findLabel',
  'createLabel',
  'labels',
  'labelIndexes',
  'labelByIndex',
  'listPayments',
  'countPayments',
  'listLabels',
  'countLabels',
  'labelTotals',
  'balance',
  'getPayment',
  'initProgress',
  'blockHash',
  'applyBlock',
  'rollbackAbove',
  'transaction',
  'markSpentPending',
  'pendingSpendTxids',
  'clearPendingSpends',
  'addPending',
  'pendingTxids',
  'removePending',
];

/**
 * The store of `location` (or of the SQLite file `location`), opened by `open()`: building the
 * app writes nothing and connects to nothing. Before `open()` and after `close()`, `progress()`
 * answers nothing scanned yet and every other read or write rejects with a SERVICE_UNAVAILABLE
 * error (503 to a client), never a crash; `close()` is safe at any time and more than once.
 */
export function createStore(location: StoreLocation | string, logger?: Logger): DeferredStore {
  const where: StoreLocation = typeof location === 'string' ? { sqliteFile: location } : location;
  const name = where.databaseUrl === undefined ? where.sqliteFile : 'in DATABASE_URL';
  let db: Store | undefined;
  let opening: Promise<Store> | undefined;
  let closed = false;
  const current = (): Store => {
    if (db !== undefined) return db;
    throw new AppError('SERVICE_UNAVAILABLE', {
      message: closed ? 'the service is stopping' : 'the service is starting',
      details: closed ? 'the database is closed' : 'the database is not open yet',
    });
  };
  // An async function: a refusal of current() becomes a rejection, never a throw.
  const via =
    (method: DatabaseMethod) =>
    async (...args: unknown[]): Promise<unknown> =>
      (current() as unknown as Record<DatabaseMethod, (...a: unknown[]) => Promise<unknown>>)[method](...args);
  const methods = Object.fromEntries(DATABASE_METHODS.map((method) => [method, via(method)])) as Pick<Store, DatabaseMethod>;
  return {
    ...methods,
    kind: where.databaseUrl === undefined ? 'sqlite' : 'postgres',
    async open() {
      if (closed) throw new Error(`the database ${name} was closed: build the app again`);
      if (db !== undefined) return;
      opening ??= openStoreAt(where, logger);
      try {
        const opened = await opening;
        if (closed) {
          await opened.close();
          throw new Error(`the database ${name} was closed while it opened`);
        }
        db = opened;
      } finally {
        opening = undefined;
      }
    },
    get isOpen() {
      return db !== undefined;
    },
    progress: () => db?.progress() ?? { startHeight: undefined, scannedHeight: undefined },
    async close() {
      closed = true;
      const open = db;
      db = undefined;
      await open?.close();
    },
  };
}
