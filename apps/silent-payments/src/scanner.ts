import { RpcError } from '@repo/errors';
import {
  isP2trHex,
  scanInputsFromRpc,
  scanOutputsFromRpc,
  type FoundOutput,
  type RpcVin,
  type ScanInput,
  type ScanOutput,
} from '@repo/bip352';
import { backoff, type Logger } from '@repo/service';
import type { AddressBook } from './address-book';
import { btcToSats, satsToBtc } from './amount';
import { ChainRpcError, rpcFailure, type ChainRpcClient } from './chain-rpc';
import type { Publisher } from './publisher';
import type { ScannedBlock, ScanPool } from './scan-pool';
import { invoiceStatus, isSettled } from './invoices';
import { paymentId, type NewPayment, type PaymentRecord, type SpendSeen, type Store } from './store';

/** A transaction as `getblock` verbosity 3 and `getrawtransaction` verbosity 2 print it. */
export interface RpcTransaction {
  txid: string;
  vin: RpcVin[];
  vout: Array<{ value: number; n: number; scriptPubKey: { hex: string } }>;
}

/** A block as `getblock <hash> 3` prints it (the fields the scanner reads). */
export interface RpcBlock {
  hash: string;
  height: number;
  previousblockhash?: string;
  nTx?: number;
  tx: RpcTransaction[];
}

/**
 * `starting` (no answer from the node yet), `initial_block_download` (first start: waiting for
 * the node to finish its initial block download before taking a start height), `waiting`
 * (SP_START_HEIGHT above the tip), `syncing`, `synced`, `retrying` (the node failed), `stopped`.
 */
export type ScannerState = 'idle' | 'starting' | 'initial_block_download' | 'waiting' | 'syncing' | 'synced' | 'retrying' | 'stopped';

/** What the last failed attempt met (for `/ready`'s reason). */
export interface ScannerFailure {
  kind: 'unreachable' | 'http' | 'garbage' | 'rpc' | 'internal';
  status: number | undefined;
  rpcCode: number | undefined;
}

/** What the scanner reports in `/health` and its logs. */
export interface ScannerStatus {
  state: ScannerState;
  start_height: number | null;
  scanned_height: number | null;
  tip_height: number | null;
  blocks_per_second: number;
  /** Consecutive failed attempts to reach the node (0 when it answers; an attempt that stored blocks before failing counts as the first). */
  failures: number;
  last_error: string | null;
  /** ISO 8601 time of the last block scanned. */
  last_block_at: string | null;
  /** The node's own state as last read (`getblockchaininfo`); null before the first answer. */
  node: { blocks: number; headers: number; verificationprogress: number; initialblockdownload: boolean } | null;
  /** The block long poll: `waiting` (following blocks), `retrying`, `unsupported` (refused: polling only) or `off`. */
  long_poll: 'off' | 'waiting' | 'unsupported' | 'retrying';
}

/** Options of {@link createScanner}. */
export interface ScannerOptions {
  rpc: ChainRpcClient;
  store: Store;
  book: AddressBook;
  publisher: Publisher;
  logger: Logger;
  /** First block to scan on the first start (SP_START_HEIGHT); undefined: the tip then. */
  startHeight?: number | undefined;
  /** Poll interval once caught up (ms). */
  pollIntervalMs?: number;
  /** Scan the mempool for pending payments. */
  mempool?: boolean;
  /** First retry delay after a failure (ms), doubled up to {@link maxBackoffMs}. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often a progress line is logged while catching up (ms). */
  progressLogIntervalMs?: number;
  /** An invoice counts as paid within this many satoshis of its amount (INVOICE_TOLERANCE_SATS); default 0. */
  invoiceToleranceSats?: bigint;
  /** How often the mempool is read between block polls (ms; SCAN_MEMPOOL_INTERVAL_MS); default the poll interval. */
  mempoolIntervalMs?: number;
  /**
   * Follows new blocks with Bitcoin Core's long poll `waitfornewblock` on this client (its own
   * connections, a timeout above `timeoutMs`); the poll of `pollIntervalMs` stays as the fallback.
   */
  longPoll?: { rpc: ChainRpcClient; timeoutMs: number } | undefined;
  /** Worker threads that parse and scan blocks while catching up (SCAN_WORKERS); undefined: this thread. */
  pool?: ScanPool | undefined;
  /** Blocks fetched ahead of the one being applied while catching up (SCAN_PREFETCH_BLOCKS); default 4. */
  prefetchBlocks?: number;
  /** Blocks requested of the node at once while catching up (SCAN_FETCH_CONCURRENCY), at most `prefetchBlocks`; default 2. */
  fetchConcurrency?: number;
}

/** The chain scanner. */
export interface Scanner {
  /** Starts the loop (idempotent). */
  start(): void;
  /** Stops the loop and waits for the block in progress to be stored. */
  stop(): Promise<void>;
  /** Skips the current wait and polls the node (the chain and the mempool) now. */
  wake(): void;
  /** `waiting` while the long poll follows blocks, `unsupported` when refused (polling only), `off` without it. */
  longPollState(): 'off' | 'waiting' | 'unsupported' | 'retrying';
  status(): ScannerStatus;
  /** What the last failed attempt met; undefined when the last attempt succeeded. */
  lastFailure(): ScannerFailure | undefined;
  /** The node's tip as last seen, for `confirmations`; undefined before the first answer. */
  tipHeight(): number | undefined;
}

const MEMPOOL_BATCH = 100;
/** Payments read at a time when the scanner lists the stored payments' txids. */
const PAYMENT_PAGE = 5_000;
/** Transactions scanned between two turns of the event loop, so HTTP requests stay served. */
const YIELD_EVERY = 64;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Waits `ms`; the function handed to `setWake` ends the wait early (it is unset when the wait ends). */
function wakeableDelay(ms: number, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      setWake(undefined);
      resolve();
    }
    setWake(done);
  });
}

/**
 * Creates the scanner: follows the node's best chain with `getblock <hash> 3` from the start
 * height, stores each block's payments with the block hash and the new height in one SQLite
 * transaction (so a restart resumes exactly after the last block stored), detects reorgs by
 * comparing stored hashes with the node's (payments of orphaned blocks are removed and found
 * again when their transaction is mined elsewhere), records mempool payments as pending, and
 * retries a failing node with exponential backoff. Publishes `TransactionReceived` for each
 * payment found in a block and `BlockScanned` for each block.
 */
export function createScanner(options: ScannerOptions): Scanner {
  const { rpc, store, book, publisher, logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const minBackoff = options.minBackoffMs ?? 1_000;
  const maxBackoff = options.maxBackoffMs ?? 60_000;
  const progressEvery = options.progressLogIntervalMs ?? 10_000;
  const scanMempool = options.mempool ?? true;
  const tolerance = options.invoiceToleranceSats ?? 0n;
  const mempoolInterval = Math.min(options.mempoolIntervalMs ?? pollIntervalMs, pollIntervalMs);
  const pool = options.pool;
  const prefetchBlocks = Math.max(1, options.prefetchBlocks ?? 4);
  const fetchConcurrency = Math.min(prefetchBlocks, Math.max(1, options.fetchConcurrency ?? 2));
  // Labels already sent to the pool's workers (the address book adds labels as invoices are made).
  let labelsSent = book.receiver.labels().length;
  // Set by the long poll (a new block) and by wake(): the next pass reads the chain, not only the mempool.
  let blockSignal = false;
  let lastFullPoll = 0;
  let longPolling: Promise<void> | undefined;
  let longPollWake: (() => void) | undefined;
  let longPollState: 'off' | 'waiting' | 'unsupported' | 'retrying' = 'off';

  let state: ScannerState = 'idle';
  let running: Promise<void> | undefined;
  let stopped = false;
  let tip: number | undefined;
  let failures = 0;
  // Blocks stored so far: an attempt that stored some before it failed met a node that answers.
  let blocksApplied = 0;
  let lastError: string | null = null;
  let failure: ScannerFailure | undefined;
  let nodeState: ScannerStatus['node'] = null;
  let lastIbdLog = 0;
  let lastBlockAt: string | null = null;
  let wakeUp: (() => void) | undefined;
  let lastProgressLog = 0;
  let everSynced = false;
  // Times (ms) of the most recent blocks scanned, for blocks/s.
  const recent: number[] = [];
  // Mempool txids already scanned (a poll only fetches the new ones).
  const mempoolSeen = new Set<string>();
  // The txids of every payment stored (read once, then kept up to date: only this scanner stores
  // payments). A spend can only concern one of their outputs, so of a dense block's thousands of
  // inputs only those reach SQLite. About 100 bytes a payment; removed payments stay (harmless).
  let paymentTxids: Set<string> | undefined;

  /** The main loop's wait; wakeUp() (a new block, wake(), stop()) ends it early. */
  const sleep = (ms: number) =>
    wakeableDelay(ms, (wake) => {
      wakeUp = wake;
    });

  function blocksPerSecond(): number {
    const now = Date.now();
    while (recent.length > 0 && now - recent[0]! > 30_000) recent.shift();
    if (recent.length < 2) return 0;
    const span = (now - recent[0]!) / 1000;
    return span <= 0 ? 0 : Math.round(((recent.length - 1) / span) * 100) / 100;
  }

  function status(): ScannerStatus {
    const progress = store.progress();
    return {
      state,
      start_height: progress.startHeight ?? null,
      scanned_height: progress.scannedHeight ?? null,
      tip_height: tip ?? null,
      blocks_per_second: blocksPerSecond(),
      failures,
      last_error: lastError,
      last_block_at: lastBlockAt,
      node: nodeState,
      long_poll: longPollState,
    };
  }

  async function nodeHashAt(height: number): Promise<string | undefined> {
    try {
      return await rpc.call<string>('getblockhash', [height]);
    } catch (err) {
      // -8: height out of range (the node's chain is shorter than ours).
      if (err instanceof ChainRpcError && err.kind === 'rpc' && err.rpcCode === -8) return undefined;
      throw err;
    }
  }

  /** Finds the highest stored block still on the node's chain and rolls back above it. */
  async function followReorg(scanned: number): Promise<number> {
    let height = scanned;
    for (;;) {
      const stored = store.blockHash(height);
      if (stored === undefined) break; // below the first block kept: nothing older to compare
      const current = await nodeHashAt(height);
      if (current === stored) break;
      height--;
    }
    if (height < scanned) {
      const { removed, unspent } = store.rollbackAbove(height);
      mempoolSeen.clear();
      logger.warn(
        { from_height: scanned, fork_height: height, payments_removed: removed.length, spends_undone: unspent },
        'reorg: blocks left the best chain, their payments and spends are rolled back',
      );
      for (const p of removed) {
        if (p.blockHeight === null || p.blockHash === null) continue;
        logger.warn({ id: p.id, old_block_height: p.blockHeight, old_block_hash: p.blockHash }, 'payment left the chain');
        publisher.publish('PaymentReorged', {
          txid: p.txid,
          vout: p.vout,
          address: p.address,
          amount: satsToBtc(p.amountSats),
          old_block_height: p.blockHeight,
          old_block_hash: p.blockHash,
        });
      }
    }
    return height;
  }

  /** Whether `tx` can pay us: a taproot output and inputs that are not a coinbase; a block without prevouts is garbage. */
  function canPayUs(tx: RpcTransaction): boolean {
    if (!tx.vout.some((out) => isP2trHex(out.scriptPubKey.hex)) || tx.vin.length === 0 || typeof tx.vin[0]?.coinbase === 'string')
      return false;
    if (tx.vin.some((vin) => vin.prevout === undefined)) {
      throw new ChainRpcError(
        'garbage',
        `transaction ${tx.txid} comes without prevouts: the node must support getblock verbosity 3 (Bitcoin Core 25 or later)`,
      );
    }
    return true;
  }

  /** The payments of what the receiver found in transaction `txid`; `values`: the amount (BTC) of each output found. */
  function paymentsOf(txid: string, found: FoundOutput[], values: number[]): NewPayment[] {
    const payments: NewPayment[] = [];
    found.forEach((f, i) => {
      const address = book.addressOf(f.label);
      if (address === undefined || values[i] === undefined) return;
      payments.push({
        txid,
        vout: f.index,
        address,
        labelM: f.label,
        amountSats: btcToSats(values[i]),
        outputKey: f.xonly,
        tweak: f.tweak,
      });
    });
    return payments;
  }

  function skipped(txid: string, message: string): void {
    // A transaction the library cannot parse cannot pay us by BIP-352 rules; never stall on it.
    logger.error({ txid, err: message }, 'transaction skipped: cannot be scanned');
  }

  /** What the receiver needs of `tx`: its inputs and taproot outputs; undefined when it cannot pay us; an error: the library refused its inputs. */
  function scanInputOf(tx: RpcTransaction): { inputs: ScanInput[]; outputs: ScanOutput[] } | { error: string } | undefined {
    if (!canPayUs(tx)) return undefined;
    try {
      return { inputs: scanInputsFromRpc(tx.vin), outputs: scanOutputsFromRpc(tx.vout).outputs };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  /** The value (BTC) of each output found in `tx`. */
  function valuesOf(tx: RpcTransaction, found: FoundOutput[]): number[] {
    return found.map((f) => tx.vout.find((o) => o.n === f.index)!.value);
  }

  /** What the receiver finds in `tx` with the value (BTC) of each output found; an error: the library refused it. */
  function findInTransaction(tx: RpcTransaction): { found: FoundOutput[]; values: number[] } | { error: string } | undefined {
    const input = scanInputOf(tx);
    if (input === undefined || 'error' in input) return input;
    let found;
    try {
      found = book.receiver.scanTransaction(input.inputs, input.outputs);
    } catch (err) {
      return { error: (err as Error).message };
    }
    return { found, values: valuesOf(tx, found) };
  }

  function scanTransaction(tx: RpcTransaction): NewPayment[] {
    const result = findInTransaction(tx);
    if (result === undefined) return [];
    if ('error' in result) {
      skipped(tx.txid, result.error);
      return [];
    }
    return paymentsOf(tx.txid, result.found, result.values);
  }

  /** The outpoints a transaction spends, as payment ids (coinbase inputs have none). */
  // (the scan pool's workers list a block's spends the same way)
  function spendsOf(tx: RpcTransaction): SpendSeen[] {
    const spends: SpendSeen[] = [];
    for (const vin of tx.vin) {
      if (typeof vin.txid === 'string' && typeof vin.vout === 'number')
        spends.push({ id: paymentId(vin.txid, vin.vout), spentTxid: tx.txid });
    }
    return spends;
  }

  /** The spends among `spends` that may concern a stored payment or one of `found` (stored with them). */
  function spendsOfOurs(spends: SpendSeen[], found: NewPayment[]): SpendSeen[] {
    if (paymentTxids === undefined) {
      paymentTxids = new Set();
      for (let offset = 0; ; offset += PAYMENT_PAGE) {
        const page = store.listPayments(PAYMENT_PAGE, offset);
        for (const p of page) paymentTxids.add(p.txid);
        if (page.length < PAYMENT_PAGE) break;
      }
    }
    for (const p of found) paymentTxids.add(p.txid);
    const known = paymentTxids;
    // a payment id is `txid:vout`
    return spends.filter((s) => known.has(s.id.slice(0, s.id.lastIndexOf(':'))));
  }

  /** Invoice statuses of the labels (m ≥ 1) among `payments`, by m. */
  function invoiceStatuses(labels: Iterable<number>): Map<number, ReturnType<typeof invoiceStatus>> {
    const statuses = new Map<number, ReturnType<typeof invoiceStatus>>();
    for (const m of labels) {
      const label = store.labelByIndex(m);
      if (label === undefined) continue;
      const totals = store.labelTotals(m);
      statuses.set(m, invoiceStatus(label.amountSats, totals.received, totals.pending, tolerance));
    }
    return statuses;
  }

  /** Publishes `InvoicePaid` for each label whose invoice became paid or overpaid since `before`. */
  function publishInvoicesPaid(before: Map<number, ReturnType<typeof invoiceStatus>>): void {
    const after = invoiceStatuses(before.keys());
    for (const [m, status] of after) {
      if (!isSettled(status) || status === before.get(m)) continue;
      const label = store.labelByIndex(m)!;
      const totals = store.labelTotals(m);
      logger.info({ m, address: label.address, status, received: satsToBtc(totals.received) }, 'invoice paid');
      publisher.publish('InvoicePaid', {
        label: label.label,
        address: label.address,
        amount: satsToBtc(label.amountSats),
        received: satsToBtc(totals.received),
        status,
      });
    }
  }

  function publishSpent(spent: PaymentRecord[], blockHeight: number | null): void {
    for (const p of spent) {
      logger.info(
        { id: p.id, spent_txid: p.spentTxid, block_height: blockHeight },
        blockHeight === null ? 'spend seen in the mempool' : 'spend confirmed',
      );
      publisher.publish('PaymentSpent', { txid: p.txid, vout: p.vout, spent_txid: p.spentTxid!, block_height: blockHeight });
    }
  }

  /** Sends the labels added since the last job to the pool's workers (before the next job). */
  function syncLabels(): void {
    if (pool === undefined) return;
    const labels = book.receiver.labels();
    for (; labelsSent < labels.length; labelsSent++) pool.addLabel(labels[labelsSent]!);
  }

  /**
   * Scans a block on this thread (SCAN_WORKERS=0; the pool's workers do the same from the node's
   * bytes), yielding to the event loop as it goes so HTTP requests stay served.
   */
  async function scanHere(block: RpcBlock): Promise<ScannedBlock> {
    const hits: ScannedBlock['hits'] = [];
    const spends: string[] = [];
    const skippedTxs: ScannedBlock['skipped'] = [];
    // YIELD_EVERY transactions at a time: one call of the receiver for all of them (its native
    // scanner then multiplies several at once), then the event loop
    for (let start = 0; start < block.tx.length; start += YIELD_EVERY) {
      const run: Array<{ tx: RpcTransaction; inputs: ScanInput[]; outputs: ScanOutput[] }> = [];
      for (const tx of block.tx.slice(start, start + YIELD_EVERY)) {
        for (const s of spendsOf(tx)) spends.push(s.id, s.spentTxid);
        const input = scanInputOf(tx);
        if (input === undefined) continue;
        if ('error' in input) skippedTxs.push({ txid: tx.txid, error: input.error });
        else run.push({ tx, ...input });
      }
      book.receiver.scanTransactions(run).forEach((found, i) => {
        const { tx } = run[i]!;
        if (found instanceof Error) skippedTxs.push({ txid: tx.txid, error: found.message });
        else if (found.length > 0) hits.push({ txid: tx.txid, found, values: valuesOf(tx, found) });
      });
      if (start + YIELD_EVERY < block.tx.length) await yieldToEventLoop();
    }
    return {
      hash: block.hash,
      height: block.height,
      previousblockhash: block.previousblockhash,
      nTx: block.nTx ?? block.tx.length,
      hits,
      spends,
      skipped: skippedTxs,
    };
  }

  /** The block at `height` as the node sends it: unparsed for the pool's workers, parsed for this thread's scan. */
  async function fetchBlock(height: number): Promise<{ id: string; body: Buffer } | RpcBlock> {
    const hash = await rpc.call<string>('getblockhash', [height]);
    if (pool === undefined) return rpc.call<RpcBlock>('getblock', [hash, 3]);
    return rpc.callRaw('getblock', [hash, 3]);
  }

  /**
   * Scans a fetched block (`more`: the node has blocks to serve after it). With the pool, the
   * node's answer goes to a worker as bytes, unparsed:
   * reading it (natively, or JSON.parse for what that reader leaves), the conversion to scan
   * inputs and the EC work all happen there.
   */
  function scanFetched(fetched: { id: string; body: Buffer } | RpcBlock, more: boolean): Promise<ScannedBlock> {
    if (pool === undefined) return scanHere(fetched as RpcBlock);
    syncLabels();
    const { id, body } = fetched as { id: string; body: Buffer };
    return pool.scanBlock(id, body, more);
  }

  /** Stores a scanned block (one SQLite transaction) and publishes its events. */
  function applyBlock(block: ScannedBlock): void {
    for (const s of block.skipped) skipped(s.txid, s.error);
    const found = block.hits.flatMap((hit) => paymentsOf(hit.txid, hit.found, hit.values));
    const spends: SpendSeen[] = [];
    for (let i = 0; i < block.spends.length; i += 2) spends.push({ id: block.spends[i]!, spentTxid: block.spends[i + 1]! });
    const ours = spendsOfOurs(spends, found);
    const labelsTouched = new Set(found.map((p) => p.labelM).filter((m): m is number => m !== null && m > 0));
    const invoicesBefore = invoiceStatuses(labelsTouched);
    const applied = store.applyBlock({ height: block.height, hash: block.hash }, found, ours);
    blocksApplied++;
    const stored: PaymentRecord[] = applied.payments;
    const now = Date.now();
    recent.push(now);
    if (recent.length > 1_000) recent.shift();
    lastBlockAt = new Date(now).toISOString();
    const confirmations = Math.max(1, (tip ?? block.height) - block.height + 1);
    for (const p of stored) {
      logger.info(
        { id: p.id, txid: p.txid, vout: p.vout, amount: satsToBtc(p.amountSats), address: p.address, block_height: block.height },
        'payment received',
      );
      publisher.publish('TransactionReceived', {
        txid: p.txid,
        amount: satsToBtc(p.amountSats),
        address: p.address,
        block_height: block.height,
        confirmations,
      });
    }
    publishSpent(applied.spent, block.height);
    publishInvoicesPaid(invoicesBefore);
    publisher.publish('BlockScanned', {
      block_height: block.height,
      block_hash: block.hash,
      transactions_count: block.nTx,
      silent_payments_found: stored.length,
    });
    logger.debug({ height: block.height, hash: block.hash, txs: block.nTx, found: stored.length }, 'block scanned');
  }

  /**
   * Bitcoin Core prints `prevout` only for confirmed transactions (getrawtransaction reads it
   * from the block's undo data), so a mempool transaction's spent scripts are looked up here:
   * from the parent transaction (in the mempool, or anywhere with -txindex), else from the UTXO
   * set (`gettxout` without the mempool, since the mempool already counts the output as spent).
   * Inputs left unresolved leave the transaction unscanned until it confirms.
   */
  async function resolvePrevouts(txs: RpcTransaction[]): Promise<void> {
    const missing = new Map<string, RpcVin[]>();
    for (const tx of txs) {
      for (const vin of tx.vin) {
        if (vin.prevout !== undefined || typeof vin.txid !== 'string' || typeof vin.vout !== 'number') continue;
        const list = missing.get(vin.txid);
        if (list === undefined) missing.set(vin.txid, [vin]);
        else list.push(vin);
      }
    }
    if (missing.size === 0) return;
    const parents = [...missing.keys()];
    for (let i = 0; i < parents.length; i += MEMPOOL_BATCH) {
      const chunk = parents.slice(i, i + MEMPOOL_BATCH);
      const answers = await rpc.batch(chunk.map((txid) => ({ method: 'getrawtransaction', params: [txid, 1] })));
      answers.forEach((answer, j) => {
        if (answer instanceof RpcError || answer === null || typeof answer !== 'object') return;
        const parent = answer as RpcTransaction;
        for (const vin of missing.get(chunk[j]!) ?? []) {
          const out = parent.vout.find((o) => o.n === vin.vout);
          if (out !== undefined) vin.prevout = { scriptPubKey: { hex: out.scriptPubKey.hex } };
        }
      });
    }
    const unresolved = [...missing.values()].flat().filter((vin) => vin.prevout === undefined);
    for (let i = 0; i < unresolved.length; i += MEMPOOL_BATCH) {
      const chunk = unresolved.slice(i, i + MEMPOOL_BATCH);
      const answers = await rpc.batch(chunk.map((vin) => ({ method: 'gettxout', params: [vin.txid, vin.vout, false] })));
      answers.forEach((answer, j) => {
        const hex = (answer as { scriptPubKey?: { hex?: unknown } } | null)?.scriptPubKey?.hex;
        if (!(answer instanceof RpcError) && typeof hex === 'string') chunk[j]!.prevout = { scriptPubKey: { hex } };
      });
    }
  }

  /** One pass over the mempool (`txids`: its `getrawmempool`, when already fetched). */
  async function pollMempool(txids?: string[]): Promise<void> {
    txids ??= await rpc.call<string[]>('getrawmempool', []);
    const current = new Set(txids);
    for (const txid of mempoolSeen) if (!current.has(txid)) mempoolSeen.delete(txid);
    const pendingGone = store.pendingTxids().filter((txid) => !current.has(txid));
    const spendsLeft = store.pendingSpendTxids().filter((txid) => !current.has(txid));
    // Gone from the mempool may mean mined in a block not scanned yet: then the block decides, not this pass.
    const mined = (pendingGone.length > 0 || spendsLeft.length > 0) && (await rpc.call<number>('getblockcount', [])) !== tip;
    if (mined) blockSignal = true;
    const gone = mined ? [] : pendingGone;
    if (gone.length > 0) {
      const removed = store.removePending(gone);
      logger.info({ txids: gone, payments_removed: removed }, 'pending payments left the mempool unconfirmed');
    }
    const spendsGone = mined ? [] : spendsLeft;
    if (spendsGone.length > 0) {
      const unspent = store.clearPendingSpends(spendsGone);
      logger.info({ txids: spendsGone, outputs_unspent: unspent }, 'spends left the mempool unconfirmed: outputs unspent again');
    }
    const fresh = txids.filter((txid) => !mempoolSeen.has(txid));
    for (let i = 0; i < fresh.length && !stopped; i += MEMPOOL_BATCH) {
      const chunk = fresh.slice(i, i + MEMPOOL_BATCH);
      const answers = await rpc.batch(chunk.map((txid) => ({ method: 'getrawtransaction', params: [txid, 1] })));
      const txs: RpcTransaction[] = [];
      for (const answer of answers) {
        // An error: gone from the mempool between the two calls (mined or replaced).
        if (!(answer instanceof RpcError) && answer !== null && typeof answer === 'object') txs.push(answer as RpcTransaction);
      }
      // Only transactions with a taproot output can pay us: resolve the prevouts of those only.
      const candidates = txs.filter((tx) => tx.vout.some((o) => isP2trHex(o.scriptPubKey.hex)));
      await resolvePrevouts(candidates);
      const found: NewPayment[] = [];
      for (const tx of candidates) {
        if (tx.vin.some((vin) => vin.prevout === undefined)) {
          logger.debug({ txid: tx.txid }, 'mempool transaction left for its block: spent scripts unknown (no txindex?)');
          continue;
        }
        found.push(...scanTransaction(tx));
      }
      for (const p of store.addPending(found)) {
        logger.info({ id: p.id, txid: p.txid, amount: satsToBtc(p.amountSats), address: p.address }, 'pending payment seen in the mempool');
      }
      // Every transaction, taproot output or not, may spend one of ours.
      publishSpent(store.markSpentPending(spendsOfOurs(txs.flatMap(spendsOf), found)), null);
      // Only now: a chunk cut short by a node failure is fetched again on the next pass.
      for (const txid of chunk) mempoolSeen.add(txid);
      await yieldToEventLoop();
    }
  }

  /** One pass: catch up with the tip (following reorgs), then the mempool. */
  async function poll(): Promise<void> {
    const info = await rpc.call<{
      blocks: number;
      headers?: number;
      bestblockhash: string;
      initialblockdownload?: boolean;
      verificationprogress?: number;
    }>('getblockchaininfo', []);
    tip = info.blocks;
    nodeState = {
      blocks: info.blocks,
      headers: info.headers ?? info.blocks,
      verificationprogress: info.verificationprogress ?? 1,
      initialblockdownload: info.initialblockdownload === true,
    };
    let progress = store.progress();
    if (progress.startHeight === undefined && nodeState.initialblockdownload) {
      // A half-synced node's tip is no start height (docs/silent-payments.md, "Start height").
      if (state !== 'initial_block_download' || Date.now() - lastIbdLog >= progressEvery) {
        lastIbdLog = Date.now();
        logger.info(
          {
            blocks: nodeState.blocks,
            headers: nodeState.headers,
            verificationprogress: nodeState.verificationprogress,
            start_height: options.startHeight ?? 'the tip once synced',
          },
          "waiting for the node's initial block download to finish before taking a start height",
        );
      }
      state = 'initial_block_download';
      return;
    }
    if (progress.startHeight === undefined) {
      const start = options.startHeight ?? tip;
      if (start > tip + 1) {
        if (state !== 'waiting') logger.info({ start_height: start, tip }, 'waiting for the chain to reach SP_START_HEIGHT');
        state = 'waiting';
        return;
      }
      const anchor = start > 0 ? await rpc.call<string>('getblockhash', [start - 1]) : undefined;
      store.initProgress(start, anchor);
      logger.info({ start_height: start, tip }, 'scanner initialised');
      progress = store.progress();
    } else if (options.startHeight !== undefined && options.startHeight !== progress.startHeight && state === 'starting') {
      logger.warn(
        { configured: options.startHeight, stored: progress.startHeight },
        'SP_START_HEIGHT differs from the stored start: resuming where the scan stopped',
      );
    }
    let scanned = await followReorg(progress.scannedHeight!);
    if (scanned < tip) state = 'syncing';
    let blocks = 0;
    // Blocks fetched ahead (at most prefetchBlocks fetched and not yet applied: the memory bound,
    // docs/silent-payments.md, "Catching up"), fetchConcurrency requests at a time (in height
    // order; each block's getblockhash then its getblock), each sent to the scan as soon as it
    // arrives: the node's work on the next blocks, the parsing and the EC work of several blocks
    // overlap. Whichever scan finishes first, results are applied strictly in block order, one
    // SQLite transaction per block.
    const ahead: { height: number; scanned: Promise<ScannedBlock> }[] = [];
    let nextFetch = scanned + 1;
    // The fetches sent last (settled, never rejecting): a new one waits for the oldest when fetchConcurrency are out.
    const fetching: Promise<unknown>[] = [];
    // Bumped when the blocks ahead are given up (reorg, failure, stop): their queued requests are not sent.
    let epoch = 0;
    // `more`: blocks after this one for the node to serve (the pool then leaves it a core)
    const fetchAhead = (height: number, more: boolean) => {
      const mine = epoch;
      const turn = fetching.length >= fetchConcurrency ? fetching.shift()! : Promise.resolve();
      const fetched = turn.then(() => (stopped || mine !== epoch ? Promise.reject(new Error('prefetch given up')) : fetchBlock(height)));
      fetching.push(fetched.catch(() => undefined));
      const result = fetched.then((block) => scanFetched(block, more));
      // a prefetch given up (reorg, stop, a failure before it) must not be an unhandled rejection
      result.catch(() => undefined);
      return { height, scanned: result };
    };
    try {
      while (scanned < tip && !stopped) {
        for (; ahead.length < prefetchBlocks && nextFetch <= tip; nextFetch++) ahead.push(fetchAhead(nextFetch, nextFetch < tip));
        const current = ahead.shift()!;
        const block = await current.scanned;
        const below = store.blockHash(scanned);
        if (below !== undefined && block.previousblockhash !== below) {
          ahead.length = 0;
          epoch++;
          scanned = await followReorg(scanned);
          nextFetch = scanned + 1;
          continue;
        }
        if (stopped) break;
        applyBlock(block);
        scanned = current.height;
        blocks++;
        if (Date.now() - lastProgressLog >= progressEvery) {
          lastProgressLog = Date.now();
          logger.info({ scanned_height: scanned, tip, blocks_per_second: blocksPerSecond() }, 'scanning');
        }
        if (scanned === tip) tip = await rpc.call<number>('getblockcount', []);
      }
    } finally {
      ahead.length = 0;
      epoch++;
    }
    if (stopped) return;
    // Once at start and after a catch-up; a single new block is only logged at debug level.
    if (!everSynced || blocks > 1) logger.info({ scanned_height: scanned, tip, blocks }, 'scanner caught up with the tip');
    everSynced = true;
    if (scanMempool) await pollMempool();
    state = 'synced';
  }

  /**
   * Waits for new blocks with `waitfornewblock <timeout> [current_tip]` (docs/silent-payments.md,
   * "Noticing blocks and transactions") and signals the main loop at once. `current_tip` (newer
   * Bitcoin Core) makes a block found between two calls return at once; Bitcoin Core 29 refuses it
   * (-1) and gets the call without (a block between two calls is then caught by the mempool
   * pass's tip check). A node or proxy that refuses the method (-32601) leaves the polling alone.
   */
  async function longPollLoop(lp: { rpc: ChainRpcClient; timeoutMs: number }): Promise<void> {
    let withTip = true;
    let lastHash: string | undefined;
    let lpFailures = 0;
    while (!stopped) {
      longPollState = 'waiting';
      try {
        // The tip to compare with: a block found before the first call is then announced too.
        lastHash ??= await lp.rpc.call<string>('getbestblockhash', []);
        const params: unknown[] = withTip ? [lp.timeoutMs, lastHash] : [lp.timeoutMs];
        const answer = await lp.rpc.call<{ hash: string; height: number }>('waitfornewblock', params);
        lpFailures = 0;
        if (answer.hash !== lastHash) {
          logger.debug({ height: answer.height, hash: answer.hash }, 'new block announced by waitfornewblock');
          blockSignal = true;
          if (state !== 'initial_block_download') wakeUp?.();
        }
        lastHash = answer.hash;
        // A node in its initial block download finds blocks many times a second: the main loop
        // checks it at the poll interval, and the long poll waits as long between its calls.
        if (state === 'initial_block_download') await longPollPause(pollIntervalMs);
      } catch (err) {
        if (stopped) break;
        if (err instanceof ChainRpcError && err.kind === 'rpc' && err.rpcCode === -32601) {
          longPollState = 'unsupported';
          logger.warn(
            { poll_interval_ms: pollIntervalMs },
            'waitfornewblock (or getbestblockhash) is not allowed by the node or proxy: new blocks are polled',
          );
          return;
        }
        if (withTip && err instanceof ChainRpcError && err.kind === 'rpc' && (err.rpcCode === -1 || err.rpcCode === -8)) {
          withTip = false; // a node before current_tip
          continue;
        }
        lpFailures++;
        longPollState = 'retrying';
        if (lpFailures === 1 || lpFailures % 10 === 0)
          logger.debug({ failures: lpFailures, err: (err as Error).message }, 'long poll failed: retrying');
        await longPollPause(backoff(lpFailures - 1, { minMs: minBackoff, maxMs: maxBackoff }));
      }
    }
  }

  /** A wait between two long polls; longPollWake() (stop()) ends it early. */
  const longPollPause = (ms: number) =>
    wakeableDelay(ms, (wake) => {
      longPollWake = wake;
    });

  async function loop(): Promise<void> {
    state = 'starting';
    while (!stopped) {
      const appliedBefore = blocksApplied;
      try {
        // The chain when a block was announced (or woken), at the poll interval, or until synced; the mempool in between.
        if (blockSignal || (state as ScannerState) !== 'synced' || Date.now() - lastFullPoll >= pollIntervalMs) {
          blockSignal = false;
          lastFullPoll = Date.now();
          await poll();
        } else if (scanMempool) {
          // A block the long poll missed (a call lost in a node restart) is caught here at the latest.
          // Both in one request: the rpc-proxy counts requests against its rate limit (README, "Load on the node").
          const [count, txids] = await rpc.batch([
            { method: 'getblockcount', params: [] },
            { method: 'getrawmempool', params: [] },
          ]);
          for (const answer of [count, txids]) if (answer instanceof RpcError) throw rpcFailure(answer);
          if (count !== tip) {
            blockSignal = true;
            continue;
          }
          await pollMempool(txids as string[]);
        }
        if (failures > 0) logger.info({ after_failures: failures }, 'chain node reachable again');
        failures = 0;
        lastError = null;
        failure = undefined;
        // Caught up: the mempool (and the tip's height) at its interval. Waiting for the node's
        // initial block download or for SP_START_HEIGHT: the chain at the poll interval.
        if (!stopped && !blockSignal) await sleep(scanMempool && (state as ScannerState) === 'synced' ? mempoolInterval : pollIntervalMs);
      } catch (err) {
        if (stopped) break;
        // A catch-up that stored blocks before this failure starts the count again: a node that
        // fails now and then during a long catch-up is retried at the shortest wait, not one that
        // doubles with every failure since the start.
        if (blocksApplied !== appliedBefore) failures = 0;
        failures++;
        lastError = err instanceof Error ? err.message : String(err);
        failure =
          err instanceof ChainRpcError
            ? { kind: err.kind, status: err.status, rpcCode: err.rpcCode }
            : { kind: 'internal', status: undefined, rpcCode: undefined };
        state = 'retrying';
        const delay = backoff(failures - 1, { minMs: minBackoff, maxMs: maxBackoff });
        const fields = { failures, retry_in_ms: delay, err: lastError };
        if (err instanceof ChainRpcError) {
          if (failures === 1 || failures % 10 === 0) logger.warn(fields, 'chain node failed: retrying');
        } else {
          logger.error({ ...fields, err }, 'scanner error: retrying');
        }
        await sleep(delay);
      }
    }
    state = 'stopped';
  }

  return {
    start() {
      if (running !== undefined) return;
      stopped = false;
      pool?.warm();
      running = loop();
      if (options.longPoll !== undefined) longPolling = longPollLoop(options.longPoll);
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      longPollWake?.();
      // The caller closes the long poll's client, which ends a call in flight.
      await longPolling;
      longPolling = undefined;
      longPollState = 'off';
      await running;
      running = undefined;
      state = 'stopped';
    },
    wake() {
      blockSignal = true;
      wakeUp?.();
    },
    longPollState: () => longPollState,
    status,
    lastFailure: () => failure,
    tipHeight: () => tip,
  };
}
