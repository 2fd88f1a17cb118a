import { resolve } from 'node:path';
import { loadTweakIndexConfig, type TweakIndexConfig } from './tweak-index/config';
import {
  ConfigError,
  readBool,
  readEnum,
  readHex,
  readInt,
  readLogLevel,
  readOptional,
  readPort,
  readString,
  type Env,
} from '@repo/config';
import { readServerLimits, readTrustProxy, type ServerLimitDefaults, type TrustProxy } from '@repo/http';
import { BACKEND_NAMES, isBackendName, type BackendName } from '@repo/bip352';

/** BIP-352 networks: `sp` addresses on mainnet, `tsp` on the test networks. */
export const NETWORKS = ['signet', 'regtest', 'testnet', 'mainnet'] as const;
/** One of {@link NETWORKS}. */
export type SpNetwork = (typeof NETWORKS)[number];

/** The folder of this app (`apps/silent-payments`), from `dist/` or `src/`. */
export const APP_DIR = resolve(__dirname, '..');

/** Largest `limit` accepted by `GET /payments` (docs/silent-payments.md, "Decisions"; the default is 10). */
export const PAYMENTS_MAX_LIMIT = 100;
/** Longest label accepted by `POST /generate-address`, in characters. */
export const LABEL_MAX_LENGTH = 128;

/** Settings of the chain node the scanner reads (the rpc-proxy, or bitcoind itself). */
export interface ChainRpcConfig {
  url: string;
  user: string | undefined;
  password: string | undefined;
  /** Bitcoin Core style cookie file (`__cookie__:<hex>`), read when no user/password is set. */
  cookieFile: string | undefined;
  timeoutMs: number;
}

/** Everything the service reads from its environment, validated once at start. */
export interface SilentPaymentsConfig {
  host: string;
  port: number;
  dataDir: string;
  logLevel: string;
  /** Which peers are proxies whose `X-Forwarded-For` and `X-Request-Id` are believed (`TRUST_PROXY`; docs/README.md, "Trusted proxies"). */
  trustProxy: TrustProxy;
  network: SpNetwork;
  /** 64 hex (the scan private key), or undefined to use/generate the key set in DATA_DIR. */
  scanKeyHex: string | undefined;
  /** 66 hex (the compressed spend public key), set together with {@link scanKeyHex}. */
  spendPubkeyHex: string | undefined;
  /** First block to scan on the first start; undefined: the tip at first start. */
  startHeight: number | undefined;
  chainRpc: ChainRpcConfig;
  scanner: {
    enabled: boolean;
    /** How often the tip and the mempool are polled once caught up (ms). */
    pollIntervalMs: number;
    /** Whether mempool transactions are scanned (pending payments). */
    mempool: boolean;
    /** How often the mempool is read between block polls (ms). */
    mempoolIntervalMs: number;
    /** Follow new blocks with the node's long poll `waitfornewblock` (SCAN_LONG_POLL). */
    longPoll: boolean;
    /**
     * The `timeout` of each `waitfornewblock` call (ms); at most the rpc-proxy's
     * NODE_LONG_POLL_TIMEOUT_MS. Bitcoin Core 29 finishes a waiting call before it stops, so this
     * is also how much longer a node's stop can take (docs/silent-payments.md).
     */
    longPollTimeoutMs: number;
    /** Longest wait between two attempts while the node is unreachable (ms). */
    maxBackoffMs: number;
    /** `native`, `wasm` or `noble`: the secp256k1 backend of `@repo/bip352`; undefined: its default. */
    backend: BackendName | undefined;
  };
  /** INVOICE_TOLERANCE_SATS: a confirmed total within this many satoshis of an invoice's amount is `paid` (default 0). */
  invoiceToleranceSats: bigint;
  relay: {
    url: string | undefined;
    publishToken: string | undefined;
    /** Events kept while the relay is unreachable; the oldest are dropped past it. */
    queueSize: number;
  };
  /** Bearer token required by POST routes (SP_API_TOKEN); undefined: writes are open. */
  apiToken: string | undefined;
  /** The light-wallet tweak index and its protocols (INDEX_ENABLED, …; docs/silent-payments.md, "The tweak index (light wallets)"). */
  index: TweakIndexConfig;
  limits: {
    /** Labels handed out at most (MAX_LABELS); past it POST /generate-address answers 409. */
    maxLabels: number;
    ratePerMinute: number;
    maxBodyBytes: number;
    /** Bodies read and parsed at once (503 past it). */
    maxConcurrentBodies: number;
    maxConnectionsPerIp: number;
    /** Time to send a request's headers, ms (408 past it). */
    headersTimeoutMs: number;
    maxConnections: number;
    requestTimeoutMs: number;
    maxInFlight: number;
  };
}

/** The listener's caps and deadlines when unset (`--help` shows them from here too). */
export const SERVER_LIMIT_DEFAULTS: ServerLimitDefaults = { maxConnections: 50, maxConnectionsPerIp: 20 };

/**
 * Reads and validates every setting of the service from `env` (defaults in README.md). Throws
 * a ConfigError naming the variable (never its value) when one is malformed.
 */
export function loadConfig(env: Env = process.env): SilentPaymentsConfig {
  const scanKeyHex = readHex(env, 'SP_SCAN_KEY', 32);
  const spendPubkeyHex = readHex(env, 'SP_SPEND_PUBKEY', 33);
  if ((scanKeyHex === undefined) !== (spendPubkeyHex === undefined)) {
    throw new ConfigError('SP_SCAN_KEY and SP_SPEND_PUBKEY must be set together');
  }
  if (spendPubkeyHex !== undefined && !/^0[23]/.test(spendPubkeyHex)) {
    throw new ConfigError('SP_SPEND_PUBKEY must be a compressed public key (02 or 03 prefix)');
  }
  const startText = readOptional(env, 'SP_START_HEIGHT');
  const startHeight = startText === undefined ? undefined : readInt(env, 'SP_START_HEIGHT', 0, { min: 0, max: 100_000_000 });
  const chainUrl = readString(env, 'CHAIN_RPC_URL', 'http://127.0.0.1:18443');
  try {
    const parsed = new URL(chainUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError('CHAIN_RPC_URL must be an http:// or https:// URL');
  }
  const user = readOptional(env, 'CHAIN_RPC_USER');
  const password = readOptional(env, 'CHAIN_RPC_PASSWORD');
  if ((user === undefined) !== (password === undefined)) {
    throw new ConfigError('CHAIN_RPC_USER and CHAIN_RPC_PASSWORD must be set together');
  }
  const relayUrl = readOptional(env, 'RELAY_URL');
  if (relayUrl !== undefined && !/^wss?:\/\/[^\s]+$/.test(relayUrl)) {
    throw new ConfigError('RELAY_URL must be a ws:// or wss:// URL');
  }
  const backend = readOptional(env, 'SP_SECP256K1_BACKEND');
  if (backend !== undefined && !isBackendName(backend)) {
    throw new ConfigError(`SP_SECP256K1_BACKEND must be one of ${BACKEND_NAMES.join(', ')}`);
  }
  const dataDir = resolve(readString(env, 'DATA_DIR', resolve(APP_DIR, 'data')));
  return {
    host: readString(env, 'HOST', '127.0.0.1'),
    port: readPort(env, 'PORT', 8000),
    dataDir,
    logLevel: readLogLevel(env),
    trustProxy: readTrustProxy(env),
    network: readEnum(env, 'SP_NETWORK', NETWORKS, 'signet'),
    scanKeyHex,
    spendPubkeyHex,
    startHeight,
    chainRpc: {
      url: chainUrl,
      user,
      password,
      // The rpc-proxy of this monorepo writes its cookie there (docs/rpc-proxy.md, "Authentication").
      cookieFile:
        user === undefined ? resolve(readString(env, 'CHAIN_RPC_COOKIE_FILE', resolve(APP_DIR, '../rpc-proxy/data/.cookie'))) : undefined,
      timeoutMs: readInt(env, 'CHAIN_RPC_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
    },
    scanner: {
      enabled: readBool(env, 'SCANNER_ENABLED', true),
      pollIntervalMs: readInt(env, 'SCAN_POLL_INTERVAL_MS', 5_000, { min: 10, max: 600_000 }),
      mempool: readBool(env, 'SCAN_MEMPOOL', true),
      mempoolIntervalMs: readInt(env, 'SCAN_MEMPOOL_INTERVAL_MS', 250, { min: 10, max: 600_000 }),
      longPoll: readBool(env, 'SCAN_LONG_POLL', true),
      longPollTimeoutMs: readInt(env, 'SCAN_LONG_POLL_TIMEOUT_MS', 10_000, { min: 100, max: 3_600_000 }),
      maxBackoffMs: readInt(env, 'SCAN_MAX_BACKOFF_MS', 60_000, { min: 10, max: 3_600_000 }),
      backend,
    },
    invoiceToleranceSats: BigInt(readInt(env, 'INVOICE_TOLERANCE_SATS', 0, { min: 0, max: 2_100_000_000_000_000 })),
    relay: {
      url: relayUrl,
      publishToken: readOptional(env, 'RELAY_PUBLISH_TOKEN'),
      queueSize: readInt(env, 'RELAY_QUEUE_SIZE', 10_000, { min: 1, max: 1_000_000 }),
    },
    apiToken: readApiToken(env),
    index: loadTweakIndexConfig(env, dataDir),
    limits: {
      maxLabels: readInt(env, 'MAX_LABELS', 100_000, { min: 1, max: 100_000_000 }),
      ratePerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 100, { min: 0 }),
      maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', 64 * 1024, { min: 1_024, max: 10 * 1024 * 1024 }),
      maxConcurrentBodies: readInt(env, 'MAX_CONCURRENT_BODIES', 16, { min: 1, max: 10_000 }),
      ...readServerLimits(env, SERVER_LIMIT_DEFAULTS),
      maxInFlight: readInt(env, 'MAX_IN_FLIGHT', 256, { min: 1 }),
    },
  };
}

/** SP_API_TOKEN: at least 16 characters when set (the value is never echoed). */
function readApiToken(env: Env): string | undefined {
  const token = readOptional(env, 'SP_API_TOKEN');
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) {
    throw new ConfigError('SP_API_TOKEN must be at least 16 characters without spaces');
  }
  return token;
}
