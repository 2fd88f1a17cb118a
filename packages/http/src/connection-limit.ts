import type { Server } from 'node:net';
import { throttledLog, type Logger } from '@repo/service';

/** Options of {@link limitConnectionsPerAddress}. */
export interface ConnectionLimitOptions {
  /** Simultaneous connections allowed per client address (kept below `maxTotal - reserve`). */
  maxPerAddress: number;
  /** Simultaneous connections allowed in all (0: no global cap). */
  maxTotal?: number;
  /**
   * Slots of `maxTotal` only an address with no connection open may take, so a new client is still
   * served while others hold the rest (default: a tenth of `maxTotal`, at least 1; 0 without `maxTotal`).
   */
  reserve?: number;
  /**
   * Time in ms a client has to send a request's headers (Node's `headersTimeout`; HTTP servers only;
   * default 10 000). Past it the request is answered 408.
   */
  headersTimeoutMs?: number;
  /**
   * Time in ms a client has to send a whole request, headers and body (Node's `requestTimeout`;
   * HTTP servers only; default 30 000). Past it the request is answered 408: a slow body cannot hold
   * a connection slot longer.
   */
  requestTimeoutMs?: number;
  logger?: Logger;
}

/** Live connection counts, for health answers and tests. */
export interface ConnectionCounter {
  /** Connections open now from `address`. */
  count(address: string): number;
  /** Connections open now in all. */
  readonly total: number;
  /** Connections refused since start. */
  readonly refused: number;
  /** The caps in force (after the per-address cap is brought below the shared pool). */
  readonly limits: { maxPerAddress: number; maxTotal: number; reserve: number };
}

/** Default header deadline in ms. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Default whole-request deadline in ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The reserve used when none is given: a tenth of the global cap, at least 1. */
export function defaultReserve(maxTotal: number): number {
  return maxTotal > 0 ? Math.max(1, Math.floor(maxTotal / 10)) : 0;
}

/**
 * Caps simultaneous connections on a net/http/https server, per client address and in all, and
 * sets header and whole-request deadlines on HTTP servers. A connection over a cap is refused by
 * closing it at once, before TLS or HTTP (a refused TCP connection costs the server nothing).
 *
 * The global pool is split in two: an address that already has a connection open may only use
 * `maxTotal - reserve` slots in all, the last `reserve` slots go to addresses with none open; and no
 * address may hold more than `maxPerAddress` (brought below `maxTotal - reserve` when it is not).
 * So one address, or a few, holding slow connections cannot lock a new client out.
 */
export function limitConnectionsPerAddress(server: Server, options: ConnectionLimitOptions): ConnectionCounter {
  const maxTotal = options.maxTotal !== undefined && options.maxTotal > 0 ? options.maxTotal : 0;
  const reserve = maxTotal > 0 ? Math.min(Math.max(0, options.reserve ?? defaultReserve(maxTotal)), maxTotal - 1) : 0;
  const shared = maxTotal > 0 ? maxTotal - reserve : Infinity;
  const maxPerAddress = Math.max(1, Math.min(options.maxPerAddress, maxTotal > 0 ? Math.max(1, shared - 1) : options.maxPerAddress));
  applyDeadlines(server, options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);

  const counts = new Map<string, number>();
  let total = 0;
  let refused = 0;
  const warnRefused = throttledLog((fields, message) => options.logger?.warn(fields, message), { everyMs: 1_000, countAs: 'refusals' });
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const current = counts.get(address) ?? 0;
    const reason =
      current >= maxPerAddress
        ? 'per-address cap'
        : maxTotal > 0 && total >= maxTotal
          ? 'global cap'
          : current > 0 && total >= shared
            ? 'reserve kept for new addresses'
            : undefined;
    if (reason !== undefined) {
      refused++;
      warnRefused({ ip: address, open: current, total, maxPerAddress, maxTotal, reason }, 'connection refused: too many connections');
      socket.destroy();
      return;
    }
    counts.set(address, current + 1);
    total++;
    socket.once('close', () => {
      total--;
      const n = (counts.get(address) ?? 1) - 1;
      if (n <= 0) counts.delete(address);
      else counts.set(address, n);
    });
  });
  return {
    count: (address) => counts.get(address) ?? 0,
    get total() {
      return total;
    },
    get refused() {
      return refused;
    },
    limits: { maxPerAddress, maxTotal, reserve },
  };
}

interface HttpDeadlines {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
}

/**
 * Node checks the two deadlines every `connectionsCheckingInterval` (30 s by default, read when
 * the server starts listening): it is brought down to a quarter of the header deadline (at most 1 s)
 * so a deadline is kept to within a second.
 */
function applyDeadlines(server: Server, headersTimeoutMs: number, requestTimeoutMs: number): void {
  const http = server as Server & Partial<HttpDeadlines>;
  if (typeof http.headersTimeout !== 'number' || typeof http.requestTimeout !== 'number') return;
  const request = Math.max(1, requestTimeoutMs);
  http.requestTimeout = request;
  // Node requires headersTimeout <= requestTimeout.
  http.headersTimeout = Math.max(1, Math.min(headersTimeoutMs, request));
  http.connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(http.headersTimeout / 4)));
}

/** What {@link guardServer} needs: the service's connection limits and deadlines, as its configuration names them. */
export interface ServerLimits {
  /** MAX_CONNECTIONS_PER_IP. */
  maxConnectionsPerIp: number;
  /** MAX_CONNECTIONS (0: no global cap). */
  maxConnections: number;
  /** HEADERS_TIMEOUT_MS. */
  headersTimeoutMs: number;
  /** REQUEST_TIMEOUT_MS. */
  requestTimeoutMs: number;
}
