import type { EventEmitter } from 'node:events';
import type { TweakIndexerEvents } from '../indexer';
import type { IndexNetwork } from '../chain-params';
import type { MempoolIndex } from '../mempool';
import type { RemoteScanPool } from '../remote-scan/scan-pool';
import type { SharedRows } from '../remote-scan/shared-rows';
import type { TweakIndexStore } from '../store';

/** JSON-RPC 2.0 error codes the server answers with (docs/silent-payments.md, "Electrum"). */
export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** A per-connection limit was passed (the request is refused, the connection stays open). */
  limit: -32000,
  /** The index has no data for what was asked (a height not indexed). */
  notFound: -32001,
  /** A script hash that is no output the connection's silent-payment subscriptions found (no general address index). */
  notServed: -32002,
  /** The node refused or failed the call (`blockchain.transaction.broadcast`'s rejection, a transaction it does not have). */
  node: -32003,
} as const;

/** An error answered to the client as `{code, message}`. */
export class ElectrumError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The node calls the wallet methods make (the service's ChainRpcClient is one). */
export interface NodeCalls {
  call<T>(method: string, params?: unknown[]): Promise<T>;
}

/** What the server reads: the index's store and the indexer's events (a {@link TweakIndexer} is one). */
export interface IndexFeed {
  store: TweakIndexStore;
  events: EventEmitter<TweakIndexerEvents>;
  /** The node the service talks to: without it the wallet methods answer that no node is configured. */
  node?: NodeCalls;
  /** The mempool's eligible transactions (the indexer's): without it no mempool match is sent. */
  mempool?: MempoolIndex;
}

/** The server's settings, shared by every connection. */
export interface ElectrumSettings {
  network: IndexNetwork;
  /** `server.version`'s first element: contains "electrs", which Cake Wallet checks before asking for tweaks. */
  serverName: string;
  /** The first height indexed (SP_INDEX_START_HEIGHT). */
  startHeight: number;
  limits: ElectrumLimits;
  /** The remote scan's worker threads (made by the server, one pool for all its connections). */
  scanPool: RemoteScanPool;
  /** The rows live subscriptions scan, read once for all of them (made by the server). */
  sharedRows: SharedRows;
  /** A history scan notifies its progress at least this often (ms); default `PROGRESS_INTERVAL_MS` (1 s). */
  progressIntervalMs?: number;
}

/** Per-connection and per-address limits (docs/silent-payments.md, "Electrum": "Limits"). */
export interface ElectrumLimits {
  /** Longest request line in bytes; past it an error is sent and the connection closed. */
  maxLineBytes: number;
  /** Requests being answered at once on one connection; past it the request gets a `-32000` error. */
  maxPending: number;
  /** `blockchain.tweaks.subscribe` streams open at once on one connection; past it a `-32000` error. */
  maxSubscriptions: number;
  /** Bytes queued for a client that does not read; streams wait below it, a push past it closes the connection. */
  maxBufferedBytes: number;
  /** Connections from one address at once; past it the new one gets an error line and is closed. */
  maxConnectionsPerIp: number;
  /** Heights one `blockchain.tweaks.subscribe` may ask (`count`). */
  maxCount: number;
  /** `blockchain.silentpayments.subscribe` wallets held at once on one connection; past it a `-32602` error (Frigate's). */
  maxWallets: number;
  /** Labels one silent-payment subscription may ask; past it a `-32602` error (Frigate's). */
  maxLabels: number;
  /** Silent-payment history scans (before `progress` 1.0) running at once on one connection; past it a `-32000` error. */
  maxScansPerConnection: number;
  /** Silent-payment history scans running at once from one address, all its connections together; past it a `-32000` error. */
  maxScansPerIp: number;
}

/** One client connection as a method sees it. */
export interface ElectrumContext {
  readonly feed: IndexFeed;
  readonly settings: ElectrumSettings;
  /** Sends a notification `{method, params}`; resolves once it is below the buffer limit. */
  notify(method: string, params: unknown[]): Promise<void>;
  /** Runs `work` after the current request's answer is written (streams start there). */
  afterReply(work: () => void): void;
  /** Subscriptions of this connection by name (`headers`, `tweaks`): each method keeps its own. */
  readonly state: Map<string, unknown>;
  /** Called when the connection closes: methods drop their subscriptions there. */
  onClose(cleanup: () => void): void;
  readonly closed: boolean;
  /** The client's address (the per-address limits count by it). */
  readonly remoteAddress: string;
}

/** A method: the params array in, the result out (or an {@link ElectrumError}). */
export type ElectrumMethod = (ctx: ElectrumContext, params: unknown[]) => Promise<unknown>;

/** A module of methods, by name (part 2 adds one module per protocol extension). */
export type ElectrumMethods = Readonly<Record<string, ElectrumMethod>>;

/** A non-negative integer parameter, or an invalid-params error naming it. */
export function intParam(params: unknown[], index: number, name: string, fallback?: number): number {
  const value = params[index] ?? fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ElectrumError(RPC_ERRORS.invalidParams, `${name} must be a non-negative integer`);
  }
  return value;
}
