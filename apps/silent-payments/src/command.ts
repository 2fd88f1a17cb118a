import { join } from 'node:path';
import { packageVersion, type CommandSpec } from '@repo/config';
import { serverLimitVariables } from '@repo/http';
import { SERVER_LIMIT_DEFAULTS } from './config';

/**
 * The entry point's command line: `--help` (usage and every environment variable with its
 * default: the README's configuration table) and `--version`; anything else is refused (exit 2).
 */
export const COMMAND: CommandSpec = {
  name: 'silent-payments',
  version: packageVersion(join(__dirname, '..', 'package.json')),
  summary: 'the BIP-352 silent-payment receiving service',
  usage: [''],
  env: [
    { name: 'HOST', default: '127.0.0.1', description: 'address to listen on (0.0.0.0 in containers)' },
    { name: 'PORT', default: '8000', description: 'HTTP port' },
    { name: 'DATA_DIR', default: 'apps/silent-payments/data', description: 'keys and silent-payments.sqlite (WAL)' },
    { name: 'LOG_LEVEL', default: 'info', description: 'fatal, error, warn, info, debug, trace, silent' },
    { name: 'SP_NETWORK', default: 'signet', description: 'signet, regtest, testnet (addresses tsp1\u2026) or mainnet (sp1\u2026)' },
    { name: 'SP_SCAN_KEY', default: 'generated', description: 'scan private key, 64 hex; set together with SP_SPEND_PUBKEY' },
    { name: 'SP_SPEND_PUBKEY', default: 'generated', description: 'compressed spend public key, 66 hex' },
    {
      name: 'SP_START_HEIGHT',
      default: "the node's tip once synced",
      description:
        'the height to start at on the first start (scanned once the node\'s blocks reach its headers; without it, the tip once the node has finished its initial block download, see "Start height"); later starts resume where the scan stopped (a different value is logged and ignored)',
    },
    { name: 'CHAIN_RPC_URL', default: 'http://127.0.0.1:18443', description: 'the rpc-proxy, or bitcoind itself' },
    { name: 'CHAIN_RPC_USER, CHAIN_RPC_PASSWORD', default: 'unset', description: 'HTTP basic credentials (set both)' },
    {
      name: 'CHAIN_RPC_COOKIE_FILE',
      default: 'apps/rpc-proxy/data/.cookie',
      description: 'cookie file (__cookie__:<hex>) used when no user is set; re-read after a 401',
    },
    { name: 'CHAIN_RPC_TIMEOUT_MS', default: '30000', description: 'per RPC call' },
    { name: 'RELAY_URL', default: 'unset', description: 'relay WebSocket, e.g. ws://127.0.0.1:8090' },
    {
      name: 'RELAY_PUBLISH_TOKEN',
      default: 'unset',
      description: 'sent as Authorization: Bearer \u2026; without it or RELAY_URL, events are not published (one warning)',
    },
    {
      name: 'RELAY_QUEUE_SIZE',
      default: '10000',
      description: 'events kept while the relay is unreachable; the oldest are dropped (with a warning) past it',
    },
    { name: 'SCANNER_ENABLED', default: 'true', description: 'false serves the HTTP API without scanning' },
    { name: 'SCAN_POLL_INTERVAL_MS', default: '5000', description: 'tip and mempool poll once caught up' },
    { name: 'SCAN_MEMPOOL', default: 'true', description: 'record mempool payments as pending' },
    { name: 'SCAN_MAX_BACKOFF_MS', default: '60000', description: 'longest wait between retries while the node fails (1 s, doubling)' },
    {
      name: 'SP_SECP256K1_BACKEND',
      default: "bip352's default (native)",
      description: 'native, wasm or noble; a missing backend stops the start (never a silent fallback)',
    },
    { name: 'RATE_LIMIT_PER_MINUTE', default: '100', description: 'requests per minute per client address; /health is not counted' },
    {
      name: 'SP_API_TOKEN',
      default: 'unset',
      description: 'when set (16 characters or more), every POST needs Authorization: Bearer <token>',
    },
    { name: 'MAX_LABELS', default: '100000', description: 'labels POST /generate-address hands out at most (409 past it)' },
    { name: 'MAX_BODY_BYTES', default: '65536 (64 KiB)', description: 'request body limit (1 KiB to 10 MiB)' },
    {
      name: 'MAX_CONCURRENT_BODIES',
      default: '16',
      description: 'request bodies read at once (4 for one address); past it 503 with Retry-After: 1',
    },
    ...serverLimitVariables(SERVER_LIMIT_DEFAULTS),
    { name: 'MAX_IN_FLIGHT', default: '256', description: 'requests in progress before 503' },
    {
      name: 'INDEX_ENABLED',
      default: 'false',
      description: 'true builds the light-wallet tweak index and serves it (gRPC, Electrum, GET /info)',
    },
    { name: 'SP_INDEX_START_HEIGHT', default: "the scanner's start height", description: 'first height indexed' },
    { name: 'INDEX_GRPC_PORT', default: '7001', description: "BlindBit's OracleService (gRPC)" },
    { name: 'ELECTRUM_PORT', default: '60601', description: 'Electrum JSON-RPC over TCP' },
    {
      name: 'ELECTRUM_TLS_PORT',
      default: 'unset',
      description: 'Electrum over TLS; 60602 when TLS_CERT_FILE and TLS_KEY_FILE are set, which it needs',
    },
    { name: 'TLS_CERT_FILE, TLS_KEY_FILE', default: 'unset', description: 'PEM certificate and key of the Electrum TLS port' },
    {
      name: 'DATABASE_URL',
      default: 'unset',
      description: "PostgreSQL of the index and the service's payments (postgres://…); unset: SQLite in DATA_DIR",
    },
    {
      name: 'REMOTE_SCAN_WORKERS',
      default: 'one a core',
      description: 'worker threads of the remote scan (Frigate methods), shared by the subscriptions in turn',
    },
    {
      name: 'SCAN_MEMPOOL_INTERVAL_MS',
      default: '250',
      description: "the mempool (and the tip's height) is read at this interval between block polls",
    },
    {
      name: 'SCAN_LONG_POLL',
      default: 'true',
      description:
        'follow new blocks with Bitcoin Core\'s long poll waitfornewblock (allowed by the rpc-proxy, see its "Long polls"); falls back to polling when the node or proxy refuses it',
    },
    {
      name: 'SCAN_LONG_POLL_TIMEOUT_MS',
      default: '10000',
      description:
        "the timeout of each waitfornewblock call; at most the rpc-proxy's NODE_LONG_POLL_TIMEOUT_MS (60000); Bitcoin Core 29's stop waits for a pending call",
    },
    {
      name: 'INVOICE_TOLERANCE_SATS',
      default: '0',
      description: 'an invoice whose confirmed total is within this many satoshis of its amount is paid (see GET /labels/{label})',
    },
    {
      name: 'TRUST_PROXY',
      default: '(none)',
      description:
        "proxies whose X-Forwarded-For and X-Request-Id are believed: a hop count or comma-separated addresses/CIDRs (express's trust proxy; docs/README.md, Trusted proxies)",
    },
  ],
};
