import type { Server } from 'node:net';
import type { Logger } from 'pino';

/** Options of {@link limitConnectionsPerAddress}. */
export interface ConnectionLimitOptions {
  /** Simultaneous connections allowed per client address. */
  maxPerAddress: number;
  /** Simultaneous connections allowed in all (0: no global cap). */
  maxTotal?: number;
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
}

/**
 * Caps simultaneous connections per client address on a net/http/https server. A connection
 * over the cap is refused by closing it at once, before TLS or HTTP (docs/README.md, "Limits and
 * refusals"; a refused TCP connection costs the server nothing).
 */
export function limitConnectionsPerAddress(server: Server, options: ConnectionLimitOptions): ConnectionCounter {
  const counts = new Map<string, number>();
  let total = 0;
  let refused = 0;
  let lastWarn = 0;
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const current = counts.get(address) ?? 0;
    if (current >= options.maxPerAddress || (options.maxTotal !== undefined && options.maxTotal > 0 && total >= options.maxTotal)) {
      refused++;
      const t = Date.now();
      if (t - lastWarn > 1_000) {
        lastWarn = t;
        options.logger?.warn({ ip: address, open: current, max: options.maxPerAddress }, 'connection refused: too many connections');
      }
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
  };
}
