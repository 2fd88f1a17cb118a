import { metricsOperation } from '@repo/metrics';
import { documentOperation, jsonContent, rateLimitHeaderObjects } from '@repo/api-contract';
import { DEFAULT_ALLOWED_METHODS, SPEC_METHODS } from './policy';

/**
 * The proxy's JSON-RPC interface as an OpenRPC document (docs/rpc-proxy.md, "Methods",
 * "Parameter checks", "Errors", "Node failures", "Limits"; served at `GET /openrpc.json`). The
 * methods are the policy's lists; the parameters are those `checkParams` checks (a test holds
 * each against it); results are Bitcoin Core's, passed through. Its `x-http` extension describes
 * the HTTP side (statuses, headers, the proxy's own endpoints) as an OpenAPI 3.1 fragment; the
 * app's tests check every answer they get against both.
 */

type Obj = Record<string, unknown>;

const HASH = { type: 'string', pattern: '^[0-9a-fA-F]{64}$' };
const HEX = { type: 'string', pattern: '^([0-9a-fA-F]{2})+$' };
const BOOL = { type: 'boolean' };
const AMOUNT = {
  type: ['number', 'string'],
  minimum: 0,
  pattern: '^(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$',
  description: 'A non-negative amount (BTC/kvB for maxfeerate, BTC for maxburnamount): a number, or a string written as a JSON number.',
};
const verbosity = (max: number) => ({ oneOf: [{ type: 'integer', minimum: 0, maximum: max }, BOOL] });

/** A parameter: its name, schema and whether it is required (docs/rpc-proxy.md, "Parameter checks"). */
const p = (name: string, schema: Obj, required = false, description?: string): Obj => ({
  name,
  schema,
  required,
  ...(description ? { description } : {}),
});

/** The parameters the proxy checks, by method (methods taking none: `[]`; methods absent here pass unchecked). */
export const CHECKED_PARAMS: Readonly<Record<string, Obj[]>> = {
  getblockchaininfo: [],
  getwalletinfo: [],
  getblockcount: [],
  getbestblockhash: [],
  getmempoolinfo: [],
  getnetworkinfo: [],
  getdifficulty: [],
  getchaintips: [],
  uptime: [],
  getblock: [
    p('blockhash', HASH, true),
    p('verbosity', verbosity(3), false, 'Alias `verbose`. 0: hex, 1: txids, 2: decoded transactions, 3: with prevouts.'),
  ],
  getblockheader: [p('blockhash', HASH, true), p('verbose', BOOL)],
  getblockhash: [p('height', { type: 'integer', minimum: 0, maximum: 2 ** 31 - 1 }, true)],
  getrawtransaction: [p('txid', HASH, true), p('verbosity', verbosity(2), false, 'Alias `verbose`.'), p('blockhash', HASH)],
  sendrawtransaction: [p('hexstring', HEX, true), p('maxfeerate', AMOUNT), p('maxburnamount', AMOUNT)],
  getrawmempool: [p('verbose', BOOL), p('mempool_sequence', BOOL)],
  getmempoolentry: [p('txid', HASH, true)],
  gettxout: [p('txid', HASH, true), p('n', { type: 'integer', minimum: 0, maximum: 2 ** 32 - 1 }, true), p('include_mempool', BOOL)],
  estimatesmartfee: [
    p('conf_target', { type: 'integer', minimum: 1, maximum: 1008 }, true),
    p('estimate_mode', { type: 'string', enum: ['unset', 'economical', 'conservative'] }, false, 'Case-insensitive.'),
  ],
};

const BLOCKCHAIN_INFO = {
  type: 'object',
  required: ['chain', 'blocks', 'headers', 'bestblockhash', 'difficulty', 'verificationprogress', 'initialblockdownload', 'chainwork'],
  properties: {
    chain: { type: 'string', description: '`signet` (also `main`, `test`, `testnet4`, `regtest`).' },
    blocks: { type: 'integer', minimum: 0 },
    headers: { type: 'integer', minimum: 0 },
    bestblockhash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    bits: { type: 'string', pattern: '^[0-9a-f]{8}$' },
    target: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    difficulty: { type: 'number' },
    time: { type: 'integer' },
    mediantime: { type: 'integer' },
    verificationprogress: { type: 'number', minimum: 0, maximum: 1 },
    initialblockdownload: { type: 'boolean' },
    chainwork: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    size_on_disk: { type: 'integer', minimum: 0 },
    pruned: { type: 'boolean' },
    pruneheight: { type: 'integer' },
    automatic_pruning: { type: 'boolean' },
    prune_target_size: { type: 'integer' },
    signet_challenge: { type: 'string' },
    warnings: { type: ['array', 'string'] },
  },
};

/** Results: the five of the interface described, the others Bitcoin Core's as they come. */
const RESULTS: Readonly<Record<string, Obj>> = {
  getblockchaininfo: { name: 'blockchaininfo', schema: BLOCKCHAIN_INFO },
  getblock: {
    name: 'block',
    description: 'Hex at verbosity 0, else the block object as Core returns it.',
    schema: { type: ['string', 'object'] },
  },
  getrawtransaction: {
    name: 'transaction',
    description: 'Hex when not verbose, else the decoded transaction.',
    schema: { type: ['string', 'object'] },
  },
  sendrawtransaction: { name: 'txid', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
  getwalletinfo: {
    name: 'walletinfo',
    schema: { type: 'object', required: ['walletname'], properties: { walletname: { type: 'string' } } },
  },
  getblockhash: { name: 'blockhash', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
  getbestblockhash: { name: 'blockhash', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
  getblockcount: { name: 'count', schema: { type: 'integer', minimum: 0 } },
  getblockheader: { name: 'header', description: 'Hex when `verbose` is false, else an object.', schema: { type: ['string', 'object'] } },
  uptime: { name: 'seconds', schema: { type: 'integer', minimum: 0 } },
};

/** Errors of the proxy and of the node (docs/rpc-proxy.md, "Errors", "Bitcoin Core behaviour"). */
const ERRORS: Readonly<Record<string, { code: number; message: string }>> = {
  parseError: {
    code: -32700,
    message: '`Parse error` or `Top-level object parse error`: the body is not a JSON object or array (HTTP 500).',
  },
  invalidRequest: {
    code: -32600,
    message: 'A malformed request object (HTTP 400), or a body over MAX_BODY_BYTES (HTTP 413, connection closed).',
  },
  methodNotFound: { code: -32601, message: '`Method not found`: unknown, or not allowed for this user (HTTP 404 in 1.0).' },
  invalidParams: {
    code: -32602,
    message: '`invalid parameter "<name>": …`, `missing parameter …`, `unknown parameter …`, `too many parameters …`.',
  },
  internalError: {
    code: -32603,
    message:
      "The node failed (unreachable, timed out, garbage, busy, refused the proxy's credentials), the proxy queue is full, or the rate limit was exceeded (HTTP 429).",
  },
  misc: {
    code: -1,
    message:
      'Client authentication failed (HTTP 401: `authentication required`, `incorrect credentials`), or a node error such as wrong parameter counts.',
  },
  typeError: { code: -3, message: 'Node: a parameter of the wrong type.' },
  notFound: { code: -5, message: 'Node: block or transaction not found, invalid address or key.' },
  invalidParameter: { code: -8, message: 'Node: invalid parameter.' },
  walletNotFound: { code: -18, message: 'Node: wallet not found.' },
  walletNotSpecified: { code: -19, message: 'Node: several wallets loaded and none named (call `/wallet/<name>`).' },
  deserialization: { code: -22, message: 'Node: transaction decode failed.' },
  verifyError: { code: -25, message: 'Node: transaction or block verification failed (missing inputs, …).' },
  verifyRejected: { code: -26, message: 'Node: transaction rejected by the mempool policy.' },
  alreadyInChain: { code: -27, message: 'Node: transaction already in the chain.' },
  warmup: { code: -28, message: 'Node: still loading its block index.' },
};

const allMethods = [...new Set<string>([...SPEC_METHODS, ...DEFAULT_ALLOWED_METHODS])];

function method(name: string): Obj {
  const params = CHECKED_PARAMS[name];
  const inInterface = (SPEC_METHODS as readonly string[]).includes(name);
  return {
    name,
    summary: `${name}${inInterface ? ' (of the interface: always allowed)' : ' (allowed by default; RPC_ALLOWED_METHODS replaces the list)'}`,
    description: params
      ? 'Parameters positional or named; checked before forwarding (unknown named and extra parameters refused: -32602).'
      : 'Parameters pass unchecked to the node, which applies its own checks.',
    paramStructure: 'either',
    params: params ?? [],
    result: RESULTS[name] ?? { name: 'result', description: "Bitcoin Core's result, passed through unchanged.", schema: {} },
    ...(name === 'sendrawtransaction' ? { errors: ['deserialization', 'verifyError', 'verifyRejected', 'alreadyInChain'].map(ref) } : {}),
  };
}

const ref = (name: string) => ({ $ref: `#/components/errors/${name}` });

const envelope = (description: string): Obj => ({
  description,
  content: jsonContent({
    description: 'The JSON-RPC answer envelope (or an array of them for a batch), body ending with a newline.',
    oneOf: [{ $ref: '#/components/schemas/Answer' }, { type: 'array', items: { $ref: '#/components/schemas/Answer' } }],
  }),
});

const rpcResponses: Obj = {
  '200': envelope('A 1.0 success, a 2.0 success or error (but -32600), a batch.'),
  '204': { description: 'A 2.0 notification (no id), or a batch of notifications only: no body.' },
  '400': envelope(
    '-32600: a malformed request object, a wallet name that is not valid percent-encoding, two Host headers, a malformed HTTP request.',
  ),
  '401': {
    ...envelope('-1: `authentication required` (no Authorization, at once) or `incorrect credentials` (after AUTH_FAILURE_DELAY_MS).'),
    headers: { 'WWW-Authenticate': { required: true, schema: { const: 'Basic realm="jsonrpc"' } } },
  },
  '404': envelope('-32601 in 1.0: unknown method, or not allowed for this user.'),
  '413': envelope('-32600: a body over MAX_BODY_BYTES (32 MiB); the connection is closed.'),
  '429': { ...envelope('-32603 `rate limit exceeded: retry after <n> s`.'), headers: rateLimitHeaderObjects(true) },
  '500': envelope("1.0 errors: -32700, -32602, -32603 (node failures), and the node's method errors passed through."),
  '503': {
    ...envelope(
      "-32603 `too many request bodies being read: retry after 1 s` (past MAX_CONCURRENT_BODIES, or an address's share of them), " +
        "or `proxy queue full: …` (NODE_QUEUE_LIMIT calls waiting for the node, or an address's share of them).",
    ),
    headers: { 'Retry-After': { required: true, schema: { const: '1' } } },
  },
};
const notPost = {
  description: 'Any other method: 405, as bitcoind.',
  responses: {
    '405': {
      description: '`JSONRPC server handles only POST requests`.',
      content: { 'text/html': { schema: { const: 'JSONRPC server handles only POST requests' } } },
    },
  },
};
const opsOtherMethods = {
  description: 'Methods other than GET and HEAD: 405 with `Allow: GET, HEAD` and no body.',
  responses: { '405': { description: 'Method not allowed.', headers: { Allow: { required: true, schema: { const: 'GET, HEAD' } } } } },
};
const ready = {
  description: 'Readiness: the node answers an authenticated getblockchaininfo (one probe at a time, reused for 500 ms).',
  headers: { 'Cache-Control': { required: true, schema: { const: 'no-store' } } },
};

export const OPENRPC = {
  openrpc: '1.3.2',
  info: {
    title: 'rpc-proxy',
    version: '1.0.0',
    description:
      "Bitcoin Core's JSON-RPC (1.0 as bitcoin-cli sends it, or 2.0), with the proxy's rules in front: HTTP Basic authentication (cookie " +
      '`DATA_DIR/.cookie`, RPC_USER/RPC_PASSWORD or RPC_AUTH), allow-lists (-32601), parameter checks (-32602), node failures (-32603), ' +
      'a cache and coalescing. POST `/` or `/wallet/<name>`. Limits (docs/rpc-proxy.md, "Limits"): 1000 requests a minute per address ' +
      '(`RATE_LIMIT_PER_MINUTE`, HTTP 429 before authentication); body 32 MiB (`MAX_BODY_BYTES`, 413); 1000 connections in all, 500 per ' +
      'address (`MAX_CONNECTIONS`, `MAX_CONNECTIONS_PER_IP`: closed at once); 16 calls in flight to the node (`NODE_MAX_CONCURRENCY`), 1024 ' +
      'waiting (`NODE_QUEUE_LIMIT`), half of both for one address (503 with Retry-After past either), 30 s per node call (`NODE_TIMEOUT_MS`: -32603).',
  },
  servers: [
    { name: 'node', url: 'http://localhost:18443/' },
    { name: 'wallet', url: 'http://localhost:18443/wallet/{wallet}', variables: { wallet: { default: 'default' } } },
  ],
  methods: allMethods.map(method),
  components: {
    errors: ERRORS,
    schemas: {
      Answer: {
        type: 'object',
        description: '1.0: `{result, error, id}` (error null on success, result null on error); 2.0: `{jsonrpc, result | error, id}`.',
        properties: {
          jsonrpc: { const: '2.0' },
          result: {},
          error: {
            type: ['object', 'null'],
            required: ['code', 'message'],
            properties: { code: { type: 'integer' }, message: { type: 'string' } },
          },
          id: {},
        },
        anyOf: [{ required: ['result'] }, { required: ['error'] }],
      },
    },
  },
  /** Errors any call may get: the proxy's and the node's common ones. */
  'x-errors': Object.keys(ERRORS)
    .filter((n) => !['deserialization', 'verifyError', 'verifyRejected', 'alreadyInChain'].includes(n))
    .map(ref),
  'x-http': {
    description: 'The HTTP side, as an OpenAPI 3.1 fragment.',
    servers: [{ url: 'http://127.0.0.1:18443', description: 'The proxy on its default address (`HOST`, `PORT`).' }],
    securitySchemes: {
      rpcAuth: {
        type: 'http',
        scheme: 'basic',
        description:
          'The cookie the proxy writes to `DATA_DIR/.cookie` (`__cookie__:<hex>`), `RPC_USER`/`RPC_PASSWORD`, or a user of `RPC_AUTH`; a failure is HTTP 401 with the envelope `{result: null, error: {code: -1}}` (docs/rpc-proxy.md, "Authentication").',
      },
    },
    paths: {
      '/': {
        post: { operationId: 'rpc', summary: 'A JSON-RPC call or batch', security: [{ rpcAuth: [] }], responses: rpcResponses },
        'x-other-methods': notPost,
      },
      '/wallet/{wallet}': {
        post: {
          operationId: 'walletRpc',
          summary: "A JSON-RPC call or batch on one of the node's wallets",
          security: [{ rpcAuth: [] }],
          parameters: [{ name: 'wallet', in: 'path', required: true, schema: { type: 'string' }, 'x-multi-segment': true }],
          responses: rpcResponses,
        },
        'x-other-methods': notPost,
      },
      '/health': {
        get: {
          operationId: 'health',
          summary: 'Liveness',
          description: 'Liveness, without authentication.',
          security: [],
          responses: {
            '200': {
              description: 'Serving.',
              content: jsonContent({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }),
            },
            '400': envelope('-32600 `more than one Host header`, or a malformed HTTP request.'),
          },
        },
        'x-other-methods': opsOtherMethods,
      },
      '/metrics': { get: metricsOperation() },
      '/ready': {
        get: {
          operationId: 'ready',
          summary: "Readiness: the node answers the proxy's authenticated call",
          security: [],
          responses: {
            '200': {
              ...ready,
              content: jsonContent({
                type: 'object',
                required: ['status', 'node'],
                properties: {
                  status: { const: 'ready' },
                  node: {
                    type: 'object',
                    properties: {
                      chain: { type: 'string' },
                      blocks: { type: 'integer' },
                      headers: { type: 'integer' },
                      initialblockdownload: { type: 'boolean' },
                    },
                  },
                },
              }),
            },
            '503': {
              ...ready,
              description: 'Not ready, with the reason.',
              content: jsonContent({
                type: 'object',
                required: ['status', 'reason', 'message'],
                properties: {
                  status: { const: 'unready' },
                  reason: {
                    enum: [
                      'node-unreachable',
                      'credentials-refused',
                      'cookie-unreadable',
                      'node-timeout',
                      'node-busy',
                      'node-garbage',
                      'proxy-queue-full',
                      'node-error',
                    ],
                  },
                  message: { type: 'string' },
                },
              }),
            },
          },
        },
        'x-other-methods': opsOtherMethods,
      },
      '/openrpc.json': {
        get: documentOperation('openrpc', 'OpenRPC'),
        'x-other-methods': {
          description: 'Another method: an unknown path (404, empty).',
          responses: { '404': { description: 'Not found.' } },
        },
      },
    },
    'x-unmatched-paths': {
      description: 'Any other path: 404 with an empty body, before authentication (as bitcoind).',
      responses: { '404': { description: 'Not found.' } },
    },
  },
};
