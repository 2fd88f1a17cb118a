import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Express } from 'express';
import { bytesToHex } from '@repo/crypto';
import { documentHandler } from '@repo/api-contract';
import { errorHandler, notFoundHandler } from '@repo/errors';
import { closeServers, once, type Logger, type ServiceApp } from '@repo/service';
import { createRateLimiter, jsonBody, guardServer, overloadGuard, rateLimit, requestTimeout, type ConnectionCounter } from '@repo/http';
import { createExpressApp, serveExpress } from '@repo/http/express';
import { createAddressBook, type AddressBook } from './address-book';
import { requireBearerForWrites } from './write-auth';
import { createChainRpcClient, type ChainRpcClient } from './chain-rpc';
import { APP_DIR, type SilentPaymentsConfig } from './config';
import { readOrGenerateKeys, type ServiceKeys } from './keys';
import { createNoopPublisher, createRelayPublisher, type Publisher } from './publisher';
import { createSilentPaymentsMetrics } from './metrics';
import type { ServiceMetrics } from '@repo/metrics';
import { createAddressRouter } from './routes/addresses';
import { OPENAPI } from './openapi';
import { createHealthRouter } from './routes/health';
import { createLabelRouter } from './routes/labels';
import { createPsbtRouter } from './routes/psbt';
import { createPaymentRouter } from './routes/payments';
import { createScanner, type BlockConsumer, type Scanner } from './scanner';
import { createIndexInfoRouter } from './routes/index-info';
import { tweakIndexConsumer } from './tweak-index/scanner-consumer';
import { createTweakIndexService, type TweakIndexService } from './tweak-index/service';
import { createStore, type DeferredStore } from './store';

/** The SQLite file under DATA_DIR. */
export const DATABASE_FILE = 'silent-payments.sqlite';

/** What {@link createApp} needs besides the configuration. */
export interface SilentPaymentsDeps {
  logger: Logger;
  /** Overrides the publisher built from RELAY_URL/RELAY_PUBLISH_TOKEN (tests). */
  publisher?: Publisher;
  /** Overrides the chain client built from CHAIN_RPC_* (tests). */
  rpc?: ChainRpcClient;
  /** First retry delay of the scanner after a node failure (ms); default 1000. */
  scannerMinBackoffMs?: number;
}

/**
 * The service, built but not listening and not scanning: `start()` writes a generated key set,
 * creates DATA_DIR and opens the database, checks it belongs to the keys, loads the labels
 * handed out, connects the relay publisher and starts the scanner (when SCANNER_ENABLED, the
 * default); `close()` closes the server, stops the scanner, the publisher and the chain client,
 * then closes the database. `close()` runs once, whether `start()` ran, failed half-way or not.
 */
export interface SilentPaymentsService extends ServiceApp<{ http: Server }> {
  app: Express;
  connections: ConnectionCounter;
  scanner: Scanner;
  /** Open from `start()` to `close()`; before, reads answer 503 (`progress()`: nothing scanned). */
  store: DeferredStore;
  book: AddressBook;
  keys: ServiceKeys;
  publisher: Publisher;
  metrics: ServiceMetrics;
  /** The light-wallet index and its servers (INDEX_ENABLED); undefined when off. */
  tweakIndex: TweakIndexService | undefined;
}

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(APP_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/**
 * The light-wallet index (INDEX_ENABLED; docs/silent-payments.md, "The tweak index (light
 * wallets)") and the block consumer that feeds it from the scanner's pass; undefined when off.
 */
function createTweakIndex(
  config: SilentPaymentsConfig,
  { store, rpc, logger }: { store: DeferredStore; rpc: ChainRpcClient; logger: Logger },
): { service: TweakIndexService; consumers: BlockConsumer[] } | undefined {
  if (!config.index.enabled) return undefined;
  const service = createTweakIndexService(config.index, {
    network: config.network,
    scannerStartHeight: config.startHeight,
    version: readVersion(),
    logger,
    // The wallet methods (transactions, fees, headers, broadcast) go to the node the scanner follows.
    node: rpc,
  });
  // SP_INDEX_START_HEIGHT, else where the scanner started (known once it has taken its start height).
  const startHeight = () => config.index.startHeight ?? store.progress().startHeight ?? 0;
  return { service, consumers: [tweakIndexConsumer({ indexer: service.indexer, rpc, startHeight })] };
}

/**
 * Builds the silent-payment service: keys (from the environment or DATA_DIR, generated on
 * first start), the store (SQLite under DATA_DIR, or PostgreSQL with DATABASE_URL), the
 * BIP-352 address book, the relay publisher, the chain scanner and the HTTP API with its
 * limits (docs/silent-payments.md, "Limits"). Never listens,
 * never reads `process.env`, writes nothing and opens no connection: `start()` writes a generated
 * key set, opens the database (rejecting one that belongs to other keys) and starts the
 * background work. Throws a ConfigError for bad keys, or the bip352 library's error when the
 * secp256k1 backend is missing.
 */
export function createApp(config: SilentPaymentsConfig, deps: SilentPaymentsDeps): SilentPaymentsService {
  const { logger } = deps;
  const { keys, persist: persistKeys } = readOrGenerateKeys({
    dataDir: config.dataDir,
    scanKeyHex: config.scanKeyHex,
    spendPubkeyHex: config.spendPubkeyHex,
    logger,
  });
  // Only the label indexes are kept in memory, loaded by start(): texts stay in the store
  // (docs/silent-payments.md, "Limits"); a label's address is computed when a payment to it is found.
  const book = createAddressBook({ keys, network: config.network, backend: config.scanner.backend });
  // PostgreSQL when DATABASE_URL is set (the service's rows under its base address), else SQLite under DATA_DIR.
  const store = createStore(
    { sqliteFile: join(config.dataDir, DATABASE_FILE), databaseUrl: config.index.databaseUrl, wallet: book.baseAddress },
    logger,
  );

  let publisher: Publisher;
  if (deps.publisher !== undefined) publisher = deps.publisher;
  else if (config.relay.url !== undefined && config.relay.publishToken !== undefined) {
    publisher = createRelayPublisher({
      url: config.relay.url,
      token: config.relay.publishToken,
      logger,
      maxQueue: config.relay.queueSize,
    });
  } else publisher = createNoopPublisher();
  const rpc = deps.rpc ?? createChainRpcClient({ ...config.chainRpc, logger });
  const instrumented = createSilentPaymentsMetrics(publisher);
  const { metrics } = instrumented;
  // Its own connections and a timeout above the long poll's, so it never holds the scanner's calls.
  const longPollRpc =
    config.scanner.enabled && config.scanner.longPoll && deps.rpc === undefined
      ? createChainRpcClient({ ...config.chainRpc, logger, timeoutMs: config.scanner.longPollTimeoutMs + config.chainRpc.timeoutMs })
      : undefined;
  const tweakIndex = createTweakIndex(config, { store, rpc, logger });
  const scanner = createScanner({
    rpc,
    store,
    book,
    publisher: instrumented.publisher,
    logger,
    startHeight: config.startHeight,
    pollIntervalMs: config.scanner.pollIntervalMs,
    mempool: config.scanner.mempool,
    minBackoffMs: deps.scannerMinBackoffMs ?? 1_000,
    maxBackoffMs: config.scanner.maxBackoffMs,
    invoiceToleranceSats: config.invoiceToleranceSats,
    mempoolIntervalMs: config.scanner.mempoolIntervalMs,
    longPoll: longPollRpc === undefined ? undefined : { rpc: longPollRpc, timeoutMs: config.scanner.longPollTimeoutMs },
    consumers: tweakIndex?.consumers ?? [],
  });
  instrumented.observeScanner(scanner);

  const app = createExpressApp({ trustProxy: config.trustProxy, logger, use: [metrics.middleware()] });
  app.use(overloadGuard(config.limits.maxInFlight));
  app.use(requestTimeout(config.limits.requestTimeoutMs));
  app.use(
    createHealthRouter({ version: readVersion(), network: config.network, scanner, publisher, scannerEnabled: config.scanner.enabled }),
  );
  app.get('/metrics', metrics.handler());
  // BlindBit's GET /info (docs/silent-payments.md, "BlindBit OracleService"), with the index.
  if (tweakIndex !== undefined) app.use(createIndexInfoRouter({ store: tweakIndex.service.indexer.store, network: config.network }));
  // The API document (docs/silent-payments.md, "API document"), outside the rate limit as health is.
  app.get('/openapi.json', documentHandler(OPENAPI));
  // After /health, so monitoring never eats the clients' allowance (docs/silent-payments.md, "Limits").
  if (config.limits.ratePerMinute > 0) app.use(rateLimit(createRateLimiter({ perMinute: config.limits.ratePerMinute })));
  // Writes authenticated before their body is read (SP_API_TOKEN).
  app.use(requireBearerForWrites(config.apiToken));
  app.use(jsonBody({ limitBytes: config.limits.maxBodyBytes, maxConcurrent: config.limits.maxConcurrentBodies }));
  app.use(createAddressRouter({ store, book, logger, maxLabels: config.limits.maxLabels }));
  app.use(createPaymentRouter({ store, tipHeight: () => scanner.tipHeight() ?? store.progress().scannedHeight }));
  app.use(createLabelRouter({ store, toleranceSats: config.invoiceToleranceSats }));
  app.use(createPsbtRouter({ store, network: config.network, spendPub: keys.spendPub, logger }));
  app.use(notFoundHandler());
  app.use(errorHandler({ logger }));

  const server = createServer(serveExpress(app, logger));
  // docs/silent-payments.md, "Limits": a per-address cap below the global one with a reserve for
  // new addresses, header and request deadlines, protocol errors in the error record.
  const connections = guardServer(server, config.limits, { logger });

  const servers = { http: server };
  return {
    app,
    servers,
    connections,
    scanner,
    store,
    book,
    keys,
    publisher,
    metrics,
    tweakIndex: tweakIndex?.service,
    async start() {
      metrics.start();
      persistKeys();
      await store.open();
      const sqliteFile = join(config.dataDir, DATABASE_FILE);
      if (store.kind === 'postgres' && existsSync(sqliteFile)) {
        // Not migrated: said once at each start, so an operator who set DATABASE_URL on a service that has history knows where it stayed.
        logger.warn(
          { file: sqliteFile },
          'DATABASE_URL is set: the service keeps its data in PostgreSQL; the labels and payments of this SQLite file are not read',
        );
      }
      await store.assertIdentity({ network: config.network, scanPub: bytesToHex(keys.scanPub), spendPub: bytesToHex(keys.spendPub) });
      book.loadLabels(await store.labelIndexes());
      logger.info(
        {
          network: config.network,
          change_address: book.changeAddress,
          labels: book.receiver.labels().length,
          backend: book.receiver.backendName,
        },
        'address book ready',
      );
      if (deps.publisher === undefined && !publisher.state().configured) {
        logger.warn('RELAY_URL or RELAY_PUBLISH_TOKEN unset: events are not published');
      }
      publisher.start();
      await tweakIndex?.service.start(config.host);
      logger.info({ network: config.network, data_dir: config.dataDir, store: store.kind }, 'silent-payments starting');
      if (config.scanner.enabled) scanner.start();
      else logger.warn('SCANNER_ENABLED=false: the chain is not scanned');
    },
    close: once(async () => {
      await closeServers(servers);
      const stopping = scanner.stop();
      // Cuts a request in flight (a node that hangs) so the scanner stops at once.
      if (deps.rpc === undefined) rpc.close();
      longPollRpc?.close();
      await stopping;
      if (deps.publisher === undefined) await publisher.close();
      await tweakIndex?.service.close();
      await store.close();
    }),
  };
}
