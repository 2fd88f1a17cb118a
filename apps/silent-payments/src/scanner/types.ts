import type { RpcVin } from '@repo/bip352';
import type { Logger } from '@repo/service';
import type { AddressBook } from '../address-book';
import type { ChainRpcClient } from '../chain-rpc';
import type { Publisher } from '../publisher';
import type { Store } from '../store';
import type { BlockConsumer } from './apply';

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
 * `starting` (no answer from the node yet), `initial_block_download` (waiting for the node to
 * finish its initial block download: before a start height is taken, or with SP_START_HEIGHT
 * while the node's blocks lag its headers), `waiting` (SP_START_HEIGHT above the tip), `syncing`,
 * `synced`, `retrying` (the node failed), `stopped`.
 */
export type ScannerState = 'idle' | 'starting' | 'initial_block_download' | 'waiting' | 'syncing' | 'synced' | 'retrying' | 'stopped';

/** The block long poll: `waiting` (following blocks), `retrying`, `unsupported` (refused: polling only) or `off`. */
export type LongPollState = 'off' | 'waiting' | 'unsupported' | 'retrying';

/** What the last failed attempt met (for `/ready`'s reason). */
export interface ScannerFailure {
  kind: 'unreachable' | 'http' | 'garbage' | 'rpc' | 'internal';
  status: number | undefined;
  rpcCode: number | undefined;
}

/** The node's own state as last read (`getblockchaininfo`). */
export interface NodeState {
  blocks: number;
  headers: number;
  verificationprogress: number;
  initialblockdownload: boolean;
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
  node: NodeState | null;
  long_poll: LongPollState;
}

/** Options of `createScanner`. */
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
  /** How often a progress line (and a wait's warning) is logged (ms). */
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
  /** Blocks fetched ahead of the one being applied while catching up; default {@link PREFETCH_BLOCKS}. */
  prefetchBlocks?: number;
  /** Blocks requested of the node at once while catching up, at most `prefetchBlocks`; default {@link FETCH_CONCURRENCY}. */
  fetchConcurrency?: number;
  /**
   * Consumers of each block besides the service's own payments (the first consumer, always
   * there), applied and rolled back in the same store transaction (`./apply`).
   */
  consumers?: BlockConsumer[];
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
  longPollState(): LongPollState;
  status(): ScannerStatus;
  /** What the last failed attempt met; undefined when the last attempt succeeded. */
  lastFailure(): ScannerFailure | undefined;
  /** The node's tip as last seen, for `confirmations`; undefined before the first answer. */
  tipHeight(): number | undefined;
}

/**
 * Blocks fetched ahead of the one being applied while catching up: the memory bound (a dense
 * block is ~5.5 MB of JSON; docs/silent-payments.md, "Catching up").
 */
export const PREFETCH_BLOCKS = 4;
/** Blocks requested of the node at once while catching up: each holds one of the node's `-rpcthreads`. */
export const FETCH_CONCURRENCY = 2;
