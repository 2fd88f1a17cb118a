import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { keyFingerprint } from '@repo/crypto';
import { closeServers, once, writeSecretFile, type Logger, type ServiceApp } from '@repo/service';
import { createRateLimiter, guardServer, type ConnectionCounter } from '@repo/http';
import type { ServiceMetrics } from '@repo/metrics';
import { COOKIE_USER, createAuthenticator } from './auth';
import { createResultCache, type ResultCache } from './cache';
import { createCoalescer, type Coalescer } from './coalesce';
import { pendingPerAddress, type ProxyConfig } from './config';
import { CALL_BATCHING, createNodeClient, type NodeClient, type NodeClientOptions } from './node-client';
import { createProxyMetrics } from './metrics';
import { createJsonRpcHandler } from './routes/json-rpc';
import { createHealthHandler } from './routes/health';
import { answerConnect, createRouter, protocolErrorBody } from './router';

/** What the app needs besides its configuration. */
export interface ProxyDeps {
  logger: Logger;
  /** How calls are gathered toward the node: {@link CALL_BATCHING} unless a test gives its own. */
  batching?: Pick<NodeClientOptions, 'batchesInFlight' | 'overlapCalls' | 'overlapBatches'>;
}

/**
 * The proxy, built but not listening: once `start()` was called, the client cookie is written
 * when the server listens (as bitcoind writes its cookie once its RPC port is bound: a second
 * proxy that cannot listen never touches the cookie of the one that runs); `close()` closes the
 * server, stops the node client and removes the cookie file it wrote.
 */
export interface ProxyApp extends ServiceApp<{ http: Server }> {
  node: NodeClient;
  cache: ResultCache;
  /** The in-flight coalescer and its counters (idle when RPC_COALESCE is false). */
  coalescer: Coalescer;
  connections: ConnectionCounter;
  /** Path of the cookie file clients read. */
  cookieFile: string;
  metrics: ServiceMetrics;
}

/** Where the node is and how the proxy logs in to it: the same for both of its node clients. */
function nodeEndpoint(config: ProxyConfig): Pick<NodeClientOptions, 'url' | 'user' | 'password' | 'cookieFile'> {
  return { url: config.nodeUrl, user: config.nodeUser, password: config.nodePassword, cookieFile: config.nodeCookieFile };
}

/**
 * The node client of the proxy's calls (all but long polls), with the node's address, credentials,
 * concurrency, batch settings and timeout of `config`; `observe` is told of each call (the metrics).
 */
export function createCallNodeClient(
  config: ProxyConfig,
  logger: Logger,
  observe?: NodeClientOptions['observe'],
  batching: ProxyDeps['batching'] = CALL_BATCHING,
): NodeClient {
  return createNodeClient({
    ...nodeEndpoint(config),
    maxConcurrency: config.nodeMaxConcurrency,
    queueLimit: config.nodeQueueLimit,
    ...batching,
    timeoutMs: config.nodeTimeoutMs,
    logger,
    observe,
  });
}

/**
 * Builds the proxy: draws a fresh cookie `__cookie__:<64 hex>` (written to DATA_DIR/.cookie, mode
 * 0600, by `start()`, as bitcoind does at every start), creates the node client, the cache, the
 * rate limiter and the connection cap, and returns the HTTP server without listening.
 */
export function createApp(config: ProxyConfig, deps: ProxyDeps): ProxyApp {
  const { logger } = deps;
  const cookie = randomBytes(32).toString('hex');
  const auth = createAuthenticator({ cookie, user: config.rpcUser, password: config.rpcPassword, rpcAuth: config.rpcAuth });
  const cache = createResultCache(config.cacheMaxBytes);
  const coalescer = createCoalescer();
  const limiter = createRateLimiter({ perMinute: config.rateLimitPerMinute });
  const instrumented = createProxyMetrics({ node: () => node, auth, cache, coalescer });
  const node = createCallNodeClient(config, logger, instrumented.observeNode, deps.batching);
  // Long polls wait on their own connections and timer: the requested timeout plus the ordinary one.
  const longPollNode = createNodeClient({
    ...nodeEndpoint(config),
    maxConcurrency: config.nodeLongPollMaxConcurrency,
    batchesInFlight: 0, // long polls are never batched
    overlapCalls: 0,
    overlapBatches: 1,
    queueLimit: 0,
    timeoutMs: config.nodeLongPollTimeoutMs + config.nodeTimeoutMs,
    logger,
  });
  if (config.nodeUser === undefined && config.nodeCookieFile === undefined) {
    logger.warn(
      { node: config.nodeUrl.origin },
      'no node credentials (BITCOIND_RPC_USER/BITCOIND_RPC_PASSWORD or BITCOIND_COOKIE_FILE): the node will refuse calls',
    );
  }
  const { metrics } = instrumented;
  const handler = createJsonRpcHandler({
    logger,
    auth: instrumented.auth,
    node,
    longPollNode,
    longPollMaxMs: config.nodeLongPollTimeoutMs,
    cache,
    coalescer: config.coalesce ? coalescer : undefined,
    limiter,
    allowedMethods: config.allowedMethods,
    userMethods: config.userMethods,
    maxBodyBytes: config.maxBodyBytes,
    maxConcurrentBodies: config.maxConcurrentBodies,
    maxPendingPerAddress: pendingPerAddress(config),
    authFailureDelayMs: config.authFailureDelayMs,
    cacheMinConfirmations: config.cacheMinConfirmations,
    trustProxy: config.trustProxy,
    record: (req, status, seconds) => instrumented.record(req, status, seconds),
  });
  // bitcoind closes idle RPC connections after -rpcservertimeout (30 s).
  const server = createServer(
    { keepAliveTimeout: 30_000 },
    createRouter({
      logger,
      trustProxy: config.trustProxy,
      jsonRpc: handler,
      health: createHealthHandler({ node, logger }),
      metrics,
      instrumented,
    }),
  );
  // Core's own words for a CONNECT, where guardServer would answer with the generic refusal.
  server.on('connect', answerConnect);
  // docs/rpc-proxy.md, "Limits": a per-address cap below the global one with a reserve for new
  // addresses, header and request deadlines, and protocol errors answered with a JSON-RPC envelope.
  const connections = guardServer(server, config, { logger, errorBody: protocolErrorBody });
  const servers = { http: server };
  let cookieWritten = false;
  return {
    servers,
    node,
    cache,
    coalescer,
    connections,
    cookieFile: config.cookieFile,
    metrics,
    start() {
      metrics.start();
      const writeCookie = () => {
        writeSecretFile(config.cookieFile, `${COOKIE_USER}:${cookie}`);
        cookieWritten = true;
        logger.info({ cookieFile: config.cookieFile, fingerprint: keyFingerprint(Buffer.from(cookie, 'hex')) }, 'client cookie written');
      };
      if (server.listening) writeCookie();
      else server.once('listening', writeCookie);
      logger.info({ node: config.nodeUrl.origin }, 'rpc-proxy starting');
      return Promise.resolve();
    },
    close: once(async () => {
      await closeServers(servers);
      node.close();
      longPollNode.close();
      if (cookieWritten) rmSync(config.cookieFile, { force: true });
    }),
  };
}
