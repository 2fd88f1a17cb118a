import type { Logger } from '@repo/service';
import type { AddressBook } from '../address-book';
import type { ChainRpcClient } from '../chain-rpc';
import type { Publisher } from '../publisher';
import type { Store } from '../store';
import type { BlockConsumer } from './apply';
import {
  FETCH_CONCURRENCY,
  PREFETCH_BLOCKS,
  type LongPollState,
  type NodeState,
  type ScannerFailure,
  type ScannerOptions,
  type ScannerState,
} from './types';

/** The scanner's settings, resolved once from its options. */
export interface ScanSettings {
  startHeight: number | undefined;
  pollIntervalMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  progressEveryMs: number;
  mempool: boolean;
  toleranceSats: bigint;
  mempoolIntervalMs: number;
  prefetchBlocks: number;
  fetchConcurrency: number;
  longPoll: { rpc: ChainRpcClient; timeoutMs: number } | undefined;
}

/**
 * The scanner's one state object: what it was built from and everything that changes while it
 * runs. Every module of the scanner takes it as its first argument; none keeps state of its own.
 */
export interface ScanContext {
  readonly rpc: ChainRpcClient;
  readonly store: Store;
  readonly book: AddressBook;
  readonly publisher: Publisher;
  readonly logger: Logger;
  readonly settings: ScanSettings;
  /** The consumers of each block, the service's payments first (`./apply`); filled once by `createScanner`. */
  readonly consumers: BlockConsumer[];

  state: ScannerState;
  stopped: boolean;
  /** The node's tip as last seen. */
  tip: number | undefined;
  /** The node's own state as last read. */
  node: NodeState | null;
  /** Consecutive failed attempts (the main loop's). */
  failures: number;
  lastError: string | null;
  failure: ScannerFailure | undefined;
  /** Blocks stored so far: an attempt that stored some before it failed met a node that answers. */
  blocksApplied: number;
  lastBlockAt: string | null;
  /** Times (ms) of the most recent blocks stored, for blocks/s. */
  readonly recent: number[];
  /** When the last progress line and the last wait warning were logged (ms). */
  lastProgressLog: number;
  lastWaitLog: number;
  /** Whether the scanner reached the tip once (the first catch-up is logged at info level). */
  everSynced: boolean;
  /** Set by the long poll (a new block) and by wake(): the next pass reads the chain, not only the mempool. */
  blockSignal: boolean;
  lastFullPoll: number;
  /** Whether a block answer was parsed because the native reader did not take it (logged once). */
  parsedBlockLogged: boolean;
  /** Mempool txids already scanned (a poll only fetches the new ones). */
  readonly mempoolSeen: Set<string>;
  /**
   * The txids of every payment stored (read once, then kept up to date: only this scanner stores
   * payments). A spend can only concern one of their outputs, so of a dense block's thousands of
   * inputs only those reach SQLite. About 100 bytes a payment; removed payments stay (harmless).
   */
  paymentTxids: Set<string> | undefined;
  longPollState: LongPollState;
  /** Ends the main loop's current wait early (a new block, wake(), stop()). */
  wakeUp: (() => void) | undefined;
  /** Ends the long poll's current pause early (stop()). */
  longPollWake: (() => void) | undefined;
  /** The main loop and the long poll while they run (start() to stop()). */
  running: Promise<void> | undefined;
  longPolling: Promise<void> | undefined;
}

/** The state object of a scanner built from `options`, idle. */
export function createScanContext(options: ScannerOptions): ScanContext {
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const prefetchBlocks = Math.max(1, options.prefetchBlocks ?? PREFETCH_BLOCKS);
  return {
    rpc: options.rpc,
    store: options.store,
    book: options.book,
    publisher: options.publisher,
    logger: options.logger,
    settings: {
      startHeight: options.startHeight,
      pollIntervalMs,
      minBackoffMs: options.minBackoffMs ?? 1_000,
      maxBackoffMs: options.maxBackoffMs ?? 60_000,
      progressEveryMs: options.progressLogIntervalMs ?? 10_000,
      mempool: options.mempool ?? true,
      toleranceSats: options.invoiceToleranceSats ?? 0n,
      mempoolIntervalMs: Math.min(options.mempoolIntervalMs ?? pollIntervalMs, pollIntervalMs),
      prefetchBlocks,
      fetchConcurrency: Math.min(prefetchBlocks, Math.max(1, options.fetchConcurrency ?? FETCH_CONCURRENCY)),
      longPoll: options.longPoll,
    },
    consumers: [],
    state: 'idle',
    stopped: false,
    tip: undefined,
    node: null,
    failures: 0,
    lastError: null,
    failure: undefined,
    blocksApplied: 0,
    lastBlockAt: null,
    recent: [],
    lastProgressLog: 0,
    lastWaitLog: 0,
    everSynced: false,
    blockSignal: false,
    lastFullPoll: 0,
    parsedBlockLogged: false,
    mempoolSeen: new Set(),
    paymentTxids: undefined,
    longPollState: 'off',
    wakeUp: undefined,
    longPollWake: undefined,
    running: undefined,
    longPolling: undefined,
  };
}

/** Waits `ms`; the function handed to `setWake` ends the wait early (it is unset when the wait ends). */
export function wakeableDelay(ms: number, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
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

/** The main loop's wait; `ctx.wakeUp()` (a new block, wake(), stop()) ends it early. */
export function sleep(ctx: ScanContext, ms: number): Promise<void> {
  return wakeableDelay(ms, (wake) => {
    ctx.wakeUp = wake;
  });
}

/** One turn of the event loop, so HTTP requests stay served during a long scan. */
export const yieldToEventLoop = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
