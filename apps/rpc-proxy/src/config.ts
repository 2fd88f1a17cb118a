import { join } from 'node:path';
import { ConfigError, readBool, readInt, readLogLevel, readList, readOptional, readPort, readString, type Env } from '@repo/config';
import { readServerLimits, readTrustProxy, type ServerLimitDefaults, type TrustProxy } from '@repo/http';
import { DEFAULT_ALLOWED_METHODS, SPEC_METHODS } from './policy';
import { parseRpcAuthLines, type RpcAuthEntry } from './auth';

/** Settings of the proxy, read once at start. */
export interface ProxyConfig {
  host: string;
  port: number;
  dataDir: string;
  logLevel: string;
  /** Plain user and password clients may use (RPC_USER / RPC_PASSWORD). */
  rpcUser: string | undefined;
  rpcPassword: string | undefined;
  /** Salted HMAC-SHA256 credentials (RPC_AUTH, rpcauth.py lines). */
  rpcAuth: RpcAuthEntry[];
  /** Path of the cookie file the proxy writes for its clients (DATA_DIR/.cookie). */
  cookieFile: string;
  /** Methods every client may call: the five of docs/rpc-proxy.md, "Methods", plus RPC_ALLOWED_METHODS. */
  allowedMethods: Set<string>;
  /** Per-user lists (RPC_USER_METHODS), each within `allowedMethods`. */
  userMethods: Map<string, Set<string>>;
  nodeUrl: URL;
  nodeUser: string | undefined;
  nodePassword: string | undefined;
  nodeCookieFile: string | undefined;
  /** Requests in flight to the node at most (NODE_MAX_CONCURRENCY). */
  nodeMaxConcurrency: number;
  /** Requests waiting for the node at most (NODE_QUEUE_LIMIT). */
  nodeQueueLimit: number;
  /** How long one node request may take (NODE_TIMEOUT_MS). */
  nodeTimeoutMs: number;
  /** Largest `timeout` of a long poll (`waitfornewblock`, ms; NODE_LONG_POLL_TIMEOUT_MS). */
  nodeLongPollTimeoutMs: number;
  /** Long polls in flight to the node at once, on their own connections (NODE_LONG_POLL_MAX_CONCURRENCY). */
  nodeLongPollMaxConcurrency: number;
  rateLimitPerMinute: number;
  maxBodyBytes: number;
  maxConnections: number;
  /** Which peers are proxies whose `X-Forwarded-For` and `X-Request-Id` are believed (`TRUST_PROXY`; docs/README.md, "Trusted proxies"). */
  trustProxy: TrustProxy;
  maxConnectionsPerIp: number;
  /** Time to send a request's headers, ms (HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** Time to send a whole request, headers and body, ms (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Authenticated bodies read at once; past it 503 (MAX_CONCURRENT_BODIES). */
  maxConcurrentBodies: number;
  /** Delay of a 401 for wrong credentials, as bitcoind's 250 ms (AUTH_FAILURE_DELAY_MS). */
  authFailureDelayMs: number;
  /** Bytes of immutable answers cached at most (CACHE_MAX_BYTES; 0 disables the cache). */
  cacheMaxBytes: number;
  /** Confirmations a transaction needs before its raw hex is cached (CACHE_MIN_CONFIRMATIONS). */
  cacheMinConfirmations: number;
  /** Merge identical read-only calls in flight into one node call (RPC_COALESCE). */
  coalesce: boolean;
}

/** Default node: a local signet bitcoind (RPC port 38332). */
export const DEFAULT_NODE_URL = 'http://127.0.0.1:38332';

/**
 * `user:method,method;user2:method` → map. A per-user list can only narrow the global list
 * (a name outside it is a configuration error, so a typo cannot silently open a method).
 */
function parseUserMethods(text: string | undefined, allowed: Set<string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  if (text === undefined) return out;
  for (const part of text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    if (colon <= 0) throw new ConfigError('RPC_USER_METHODS must look like user:method,method;user2:method');
    const user = part.slice(0, colon).trim();
    const methods = part
      .slice(colon + 1)
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    for (const m of methods) {
      if (!allowed.has(m)) throw new ConfigError(`RPC_USER_METHODS names ${m} for ${user}, which is not in the global allow-list`);
    }
    out.set(user, new Set(methods));
  }
  return out;
}

/**
 * The listener's caps and deadlines when unset (`--help` shows them from here too): room for a
 * local client that opens a connection per call, 400 at once as Bitcoin Core serves them (the
 * npm `bitcoin-core` client does), while the last tenth of the connections stays for addresses
 * with none open (docs/rpc-proxy.md, "Limits").
 */
export const SERVER_LIMIT_DEFAULTS: ServerLimitDefaults = { maxConnections: 1000, maxConnectionsPerIp: 500, requestTimeoutMs: 60_000 };

/**
 * Calls one client address may have at the node at once, in flight or waiting: half of what the
 * proxy holds toward the node (NODE_MAX_CONCURRENCY + NODE_QUEUE_LIMIT), so one address cannot
 * fill the queue the others wait in (docs/rpc-proxy.md, "Limits").
 */
export function pendingPerAddress(config: Pick<ProxyConfig, 'nodeMaxConcurrency' | 'nodeQueueLimit'>): number {
  return Math.max(1, Math.floor((config.nodeMaxConcurrency + config.nodeQueueLimit) / 2));
}

/** Reads and checks every setting; throws ConfigError naming the variable. */
export function loadConfig(env: Env = process.env): ProxyConfig {
  const dataDir = readString(env, 'DATA_DIR', join(__dirname, '..', 'data'));
  const rpcUser = readOptional(env, 'RPC_USER');
  const rpcPassword = readOptional(env, 'RPC_PASSWORD');
  if ((rpcUser === undefined) !== (rpcPassword === undefined)) throw new ConfigError('RPC_USER and RPC_PASSWORD must be set together');
  const nodeUser = readOptional(env, 'BITCOIND_RPC_USER');
  const nodePassword = readOptional(env, 'BITCOIND_RPC_PASSWORD');
  if ((nodeUser === undefined) !== (nodePassword === undefined)) {
    throw new ConfigError('BITCOIND_RPC_USER and BITCOIND_RPC_PASSWORD must be set together');
  }
  let nodeUrl: URL;
  try {
    nodeUrl = new URL(readString(env, 'BITCOIND_RPC_URL', DEFAULT_NODE_URL));
  } catch {
    throw new ConfigError('BITCOIND_RPC_URL must be a URL like http://127.0.0.1:38332');
  }
  if (nodeUrl.protocol !== 'http:') throw new ConfigError('BITCOIND_RPC_URL must be an http:// URL (bitcoind serves plain HTTP)');
  let rpcAuth: RpcAuthEntry[];
  try {
    rpcAuth = parseRpcAuthLines(readOptional(env, 'RPC_AUTH') ?? '');
  } catch (err) {
    throw new ConfigError(`RPC_AUTH: ${(err as Error).message}`);
  }
  const allowedMethods = new Set([...SPEC_METHODS, ...readList(env, 'RPC_ALLOWED_METHODS', DEFAULT_ALLOWED_METHODS)]);
  return {
    host: readString(env, 'HOST', '127.0.0.1'),
    port: readPort(env, 'PORT', 18443),
    dataDir,
    logLevel: readLogLevel(env),
    rpcUser,
    rpcPassword,
    rpcAuth,
    cookieFile: join(dataDir, '.cookie'),
    allowedMethods,
    userMethods: parseUserMethods(readOptional(env, 'RPC_USER_METHODS'), allowedMethods),
    nodeUrl,
    nodeUser,
    nodePassword,
    nodeCookieFile: readOptional(env, 'BITCOIND_COOKIE_FILE'),
    nodeMaxConcurrency: readInt(env, 'NODE_MAX_CONCURRENCY', 16, { min: 1, max: 1024 }),
    nodeQueueLimit: readInt(env, 'NODE_QUEUE_LIMIT', 1024, { min: 0, max: 1_000_000 }),
    nodeTimeoutMs: readInt(env, 'NODE_TIMEOUT_MS', 30_000, { min: 1, max: 3_600_000 }),
    nodeLongPollTimeoutMs: readInt(env, 'NODE_LONG_POLL_TIMEOUT_MS', 60_000, { min: 1, max: 3_600_000 }),
    nodeLongPollMaxConcurrency: readInt(env, 'NODE_LONG_POLL_MAX_CONCURRENCY', 8, { min: 1, max: 1024 }),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 1000, { min: 0, max: 100_000_000 }),
    maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', 32 * 1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
    ...readServerLimits(env, SERVER_LIMIT_DEFAULTS),
    trustProxy: readTrustProxy(env),
    maxConcurrentBodies: readInt(env, 'MAX_CONCURRENT_BODIES', 8, { min: 1, max: 10_000 }),
    authFailureDelayMs: readInt(env, 'AUTH_FAILURE_DELAY_MS', 250, { min: 0, max: 10_000 }),
    cacheMaxBytes: readInt(env, 'CACHE_MAX_BYTES', 64 * 1024 * 1024, { min: 0, max: 16 * 1024 * 1024 * 1024 }),
    cacheMinConfirmations: readInt(env, 'CACHE_MIN_CONFIRMATIONS', 6, { min: 1, max: 1_000_000 }),
    coalesce: readBool(env, 'RPC_COALESCE', true),
  };
}
