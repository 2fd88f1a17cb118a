import { readFileSync } from 'node:fs';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import { ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from '@repo/service';
import type { IndexNetwork } from './chain-params';
import type { TweakIndexConfig } from './config';
import type { NodeCalls } from './electrum/protocol';
import { createElectrumServers, ELECTRUM_LIMIT_DEFAULTS, type ElectrumServers } from './electrum/server';
import { createOracleGrpcServer } from './grpc/oracle-service';
import { createTweakIndexer, type TweakIndexer } from './indexer';
import { createTweakIndexStore } from './open-store';

/** The index, its indexer and its two protocol servers, built without side effects. */
export interface TweakIndexService {
  indexer: TweakIndexer;
  electrum: ElectrumServers;
  grpc: GrpcServer;
  /** Opens the store, binds gRPC on INDEX_GRPC_PORT and listens on ELECTRUM_PORT (and ELECTRUM_TLS_PORT). */
  start(host: string): Promise<{ grpcPort: number; electrumPort: number; electrumTlsPort: number | undefined }>;
  /** Stops the listeners (ending their connections), then closes the store. */
  close(): Promise<void>;
}

/** What {@link createTweakIndexService} needs besides the index's configuration. */
export interface TweakIndexServiceDeps {
  network: IndexNetwork;
  /** The scanner's start height: the index's when SP_INDEX_START_HEIGHT is unset. */
  scannerStartHeight: number | undefined;
  version: string;
  logger: Logger;
  /** The node the wallet methods call (the service's ChainRpcClient); without it they answer that no node is configured. */
  node?: NodeCalls;
}

/** Builds the light-wallet index (docs/silent-payments.md, "The tweak index (light wallets)"); the scanner's block pass feeds `indexer`. */
export function createTweakIndexService(config: TweakIndexConfig, deps: TweakIndexServiceDeps): TweakIndexService {
  const store = createTweakIndexStore(config);
  const startHeight = config.startHeight ?? deps.scannerStartHeight ?? 0;
  const indexer = createTweakIndexer(store, { startHeight });
  const electrum = createElectrumServers({
    feed: { store: indexer.store, events: indexer.events, node: deps.node, mempool: indexer.mempool },
    settings: {
      network: deps.network,
      serverName: `silent-payments-electrs ${deps.version}`,
      startHeight,
      limits: ELECTRUM_LIMIT_DEFAULTS,
    },
    logger: deps.logger,
    scanWorkers: config.remoteScanWorkers,
    tls:
      config.tlsCertFile === undefined || config.tlsKeyFile === undefined
        ? undefined
        : { cert: readFileSync(config.tlsCertFile, 'utf8'), key: readFileSync(config.tlsKeyFile, 'utf8') },
  });
  const grpc = createOracleGrpcServer({ store, network: deps.network, logger: deps.logger });
  const listen = (server: ElectrumServers['tcp'], port: number, host: string): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  return {
    indexer,
    electrum,
    grpc,
    async start(host) {
      const { rebuilt } = await store.open();
      if (rebuilt) {
        deps.logger.warn(
          { store: store.kind, start_height: startHeight },
          'tweak index: the tables of an earlier layout were dropped; the index is built again from the node',
        );
      }
      const grpcPort = await new Promise<number>((resolve, reject) =>
        grpc.bindAsync(`${host}:${config.grpcPort}`, ServerCredentials.createInsecure(), (error, port) =>
          error ? reject(error) : resolve(port),
        ),
      );
      await listen(electrum.tcp, config.electrumPort, host);
      if (electrum.tls !== undefined && config.electrumTlsPort !== undefined) await listen(electrum.tls, config.electrumTlsPort, host);
      const port = (server: ElectrumServers['tcp'] | undefined): number | undefined => (server?.address() as { port: number } | null)?.port;
      const ports = { grpcPort, electrumPort: port(electrum.tcp)!, electrumTlsPort: port(electrum.tls) };
      deps.logger.info({ ...ports, store: store.kind, start_height: startHeight }, 'tweak index serving');
      return ports;
    },
    async close() {
      await electrum.close();
      await indexer.close();
      await new Promise<void>((resolve) => grpc.tryShutdown(() => resolve()));
      await store.close();
    },
  };
}
