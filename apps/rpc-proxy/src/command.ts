import { join } from 'node:path';
import { packageVersion, type CommandSpec } from '@repo/config';
import { serverLimitVariables } from '@repo/http';
import { SERVER_LIMIT_DEFAULTS } from './config';

/**
 * The entry point's command line: `--help` (usage and every environment variable with its
 * default: the README's configuration table) and `--version`; anything else is refused (exit 2).
 */
export const COMMAND: CommandSpec = {
  name: 'rpc-proxy',
  version: packageVersion(join(__dirname, '..', 'package.json')),
  summary: 'a JSON-RPC proxy in front of bitcoind',
  usage: [''],
  env: [
    { name: 'HOST', default: '127.0.0.1', description: 'listen address' },
    { name: 'PORT', default: '18443', description: 'listen port' },
    {
      name: 'DATA_DIR',
      default: 'apps/rpc-proxy/data',
      description: 'the client cookie .cookie is written here at every start (mode 0600), removed at shutdown',
    },
    {
      name: 'LOG_LEVEL',
      default: 'info',
      description: 'pino level; one JSON line per request (method, path, status, rpc method, user, ip, ms)',
    },
    { name: 'RPC_USER, RPC_PASSWORD', default: 'unset', description: 'a plain client user (both or neither)' },
    {
      name: 'RPC_AUTH',
      default: 'unset',
      description:
        "rpcauth lines as Core's share/rpcauth/rpcauth.py prints them (user:salt$hmac, optional rpcauth= prefix), separated by newlines, commas or spaces",
    },
    {
      name: 'RPC_ALLOWED_METHODS',
      default: 'read-only list below',
      description: "global allow-list (comma-separated); the interface's five are always added",
    },
    {
      name: 'RPC_USER_METHODS',
      default: 'unset',
      description:
        'per-user lists: monitor:getblockcount,getblockchaininfo;wallet:sendrawtransaction,getwalletinfo; a name outside the global list is a start error',
    },
    { name: 'BITCOIND_RPC_URL', default: 'http://127.0.0.1:38332', description: "the node (signet's RPC port)" },
    { name: 'BITCOIND_RPC_USER, BITCOIND_RPC_PASSWORD', default: 'unset', description: 'node credentials (win over the cookie file)' },
    {
      name: 'BITCOIND_COOKIE_FILE',
      default: 'unset',
      description: 'node cookie file; re-read when it changes (checked at most once a second, and at once when the node answers 401)',
    },
    {
      name: 'NODE_MAX_CONCURRENCY',
      default: '16',
      description: "calls in flight to the node at most (bitcoind 29's default -rpcthreads); more wait in a FIFO queue",
    },
    {
      name: 'NODE_QUEUE_LIMIT',
      default: '1024',
      description:
        'calls waiting for the node at most; beyond, HTTP 503 with Retry-After at once; one address may hold half of NODE_MAX_CONCURRENCY + NODE_QUEUE_LIMIT',
    },
    { name: 'NODE_TIMEOUT_MS', default: '30000', description: 'one node call at most (then -32603 "node timed out")' },
    { name: 'RATE_LIMIT_PER_MINUTE', default: '1000', description: 'requests per minute per client address (0 disables)' },
    { name: 'MAX_BODY_BYTES', default: '33554432 (32 MiB)', description: 'request body limit' },
    ...serverLimitVariables(SERVER_LIMIT_DEFAULTS, {
      request: 'a whole request (headers and body) not received in time: 408, connection closed (the answer: NODE_TIMEOUT_MS)',
    }),
    {
      name: 'MAX_CONCURRENT_BODIES',
      default: '8',
      description: 'authenticated bodies read at once (2 for one address); past it HTTP 503 with Retry-After: 1',
    },
    { name: 'AUTH_FAILURE_DELAY_MS', default: '250', description: "delay before a 401 for wrong credentials (bitcoind's)" },
    { name: 'CACHE_MAX_BYTES', default: '67108864 (64 MiB)', description: 'cache budget (0 disables)' },
    {
      name: 'CACHE_MIN_CONFIRMATIONS',
      default: '6',
      description: 'confirmations before a getrawtransaction hex (without block hash) is cached',
    },
    {
      name: 'RPC_COALESCE',
      default: 'true',
      description:
        'merge identical read-only calls that are in flight at the same time into one node call (see "Coalescing"); false: every call goes to the node',
    },
    {
      name: 'NODE_LONG_POLL_TIMEOUT_MS',
      default: '60000',
      description: 'largest timeout a long poll (waitfornewblock) may ask; its call may take that plus NODE_TIMEOUT_MS (see "Long polls")',
    },
    {
      name: 'NODE_LONG_POLL_MAX_CONCURRENCY',
      default: '8',
      description:
        'long polls in flight to the node at most, on their own connections; one more is answered -32603 "proxy queue full" at once',
    },
    {
      name: 'TRUST_PROXY',
      default: '(none)',
      description:
        "proxies whose X-Forwarded-For and X-Request-Id are believed: a hop count or comma-separated addresses/CIDRs (express's trust proxy; docs/README.md, Trusted proxies)",
    },
  ],
};
