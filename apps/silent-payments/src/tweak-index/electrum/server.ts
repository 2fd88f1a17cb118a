import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Logger } from '@repo/service';
import { serveElectrumConnection } from './connection';
import { headerMethods } from './methods/headers';
import { serverMethods } from './methods/server';
import { silentPaymentMethods } from './methods/silent-payments';
import { tweakMethods } from './methods/tweaks';
import { walletMethods } from './methods/wallet';
import { createRemoteScanPool, defaultRemoteScanWorkers } from '../remote-scan/scan-pool';
import { createSharedRows } from '../remote-scan/shared-rows';
import type { ElectrumMethods, ElectrumSettings, IndexFeed } from './protocol';

/** The method modules served (part 2 adds its own here). */
export const ELECTRUM_METHOD_MODULES: readonly ElectrumMethods[] = [
  serverMethods,
  headerMethods,
  tweakMethods,
  silentPaymentMethods,
  walletMethods,
];

/** Defaults of the Electrum limits (docs/silent-payments.md, "Electrum": "Limits"). */
export const ELECTRUM_LIMIT_DEFAULTS = {
  maxLineBytes: 64 * 1024,
  maxPending: 32,
  maxSubscriptions: 4,
  maxBufferedBytes: 8 * 1024 * 1024,
  maxConnectionsPerIp: 16,
  maxCount: 1_000_000,
  maxWallets: 10,
  maxLabels: 10,
  maxScansPerConnection: 2,
  maxScansPerIp: 4,
} as const;

/** Options of {@link createElectrumServers}. */
export interface ElectrumServerOptions {
  feed: IndexFeed;
  settings: Omit<ElectrumSettings, 'scanPool' | 'sharedRows'>;
  logger: Logger;
  /** Worker threads of the remote scan (REMOTE_SCAN_WORKERS); default one a core. */
  scanWorkers?: number;
  /** The PEM certificate and key (`loadOrCreateTlsCredentials` of TLS_CERT_FILE/TLS_KEY_FILE): with them a second, TLS listener is made. */
  tls?: { cert: string; key: string };
  modules?: readonly ElectrumMethods[];
}

/** The listeners, and `close()`: stop listening and end every connection. */
export interface ElectrumServers {
  tcp: Server;
  tls: Server | undefined;
  close(): Promise<void>;
}

/**
 * The Electrum servers (plain TCP, and TLS when a certificate is given), not listening: the
 * caller listens on ELECTRUM_PORT / ELECTRUM_TLS_PORT and closes them.
 */
export function createElectrumServers(options: ElectrumServerOptions): ElectrumServers {
  const { feed, logger } = options;
  const scanPool = createRemoteScanPool({ workers: options.scanWorkers ?? defaultRemoteScanWorkers(), logger });
  const sharedRows = createSharedRows(feed.store, feed.events);
  const settings: ElectrumSettings = { ...options.settings, scanPool, sharedRows };
  const methods = new Map<string, (typeof tweakMethods)[string]>();
  for (const module of options.modules ?? ELECTRUM_METHOD_MODULES)
    for (const [name, method] of Object.entries(module)) methods.set(name, method);
  const perAddress = new Map<string, number>();
  const sockets = new Set<Socket>();
  const accept = (socket: Socket): void => {
    const address = socket.remoteAddress ?? 'unknown';
    const open = perAddress.get(address) ?? 0;
    if (open >= settings.limits.maxConnectionsPerIp) {
      socket.end(
        `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: `more than ${settings.limits.maxConnectionsPerIp} connections from this address` } })}\n`,
      );
      return;
    }
    perAddress.set(address, open + 1);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    serveElectrumConnection(socket, methods, feed, settings, logger);
  };
  const tcp = createServer(accept);
  const tls = options.tls === undefined ? undefined : createTlsServer({ cert: options.tls.cert, key: options.tls.key }, accept);
  const listening = tls === undefined ? [tcp] : [tcp, tls];
  return {
    tcp,
    tls,
    async close() {
      const closing = listening.map(
        (server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
      );
      // Subscribers would keep the servers open forever: their connections end here.
      for (const socket of sockets) socket.destroy();
      sharedRows.close();
      await Promise.all([...closing, scanPool.close()]);
    },
  };
}
