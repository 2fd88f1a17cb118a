import { metricsOperation } from '@repo/metrics';
import { documentOperation, errorResponse, guardResponses, jsonContent, rateLimitHeaderObjects, withHeaders } from '@repo/api-contract';
import { LABEL_MAX_LENGTH, PAYMENTS_MAX_LIMIT } from './config';
import { FEE_RATE_MAX, FEE_RATE_MIN } from './psbt';
import { PSBT_MAX_INPUTS } from './routes/psbt';

/**
 * The silent-payment service's API as an OpenAPI 3.1 document (docs/silent-payments.md,
 * "Endpoints", "Payment record", "Errors", "Limits"; served at `GET /openapi.json`). The app's
 * tests check every answer they get against it.
 */

type Obj = Record<string, unknown>;

const SCANNER_STATES = ['idle', 'starting', 'initial_block_download', 'waiting', 'syncing', 'synced', 'retrying', 'stopped'];
const HEIGHT = { type: ['integer', 'null'], minimum: 0 };
const TIME = { type: 'string', format: 'date-time' };
const TXID = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const ADDRESS = {
  type: 'string',
  pattern: '^t?sp1',
  description: 'A BIP-352 address: `tsp1…` on the test networks, `sp1…` on mainnet.',
};
const BTC = { type: 'number', exclusiveMinimum: 0, maximum: 21_000_000 };
const NODE = {
  type: ['object', 'null'],
  description: "The node's state as last read.",
  properties: {
    blocks: { type: 'integer' },
    headers: { type: 'integer' },
    verificationprogress: { type: 'number' },
    initialblockdownload: { type: 'boolean' },
  },
};

const guards = guardResponses({ rateLimited: true });
const { '429': _limited, ...unlimited } = guards;
const rateLimit = rateLimitHeaderObjects(false);
const tooLarge = errorResponse('A body over `MAX_BODY_BYTES`.', ['PAYLOAD_TOO_LARGE']);
const malformed = errorResponse('A malformed JSON body (`malformed JSON body`).', ['INVALID_REQUEST']);
const limited = (responses: Obj): Obj => withHeaders({ ...responses, ...guards }, rateLimit);
const notFound = errorResponse('No such endpoint: `no such endpoint: <METHOD> <path>`.', ['NOT_FOUND']);
/**
 * The answer to a POST without the bearer token while `SP_API_TOKEN` is set (src/write-auth.ts:
 * checked before the body is read, on every POST, known path or not).
 */
const unauthorized = errorResponse(
  'Only while `SP_API_TOKEN` is set: a POST without `Authorization: Bearer <token>` (`authentication required`) or with another token (`invalid token`); `WWW-Authenticate: Bearer realm="silent-payments"`.',
  ['UNAUTHORIZED'],
  { 'WWW-Authenticate': { schema: { type: 'string', pattern: '^Bearer realm="silent-payments"' } } },
);
/** The scheme of `SP_API_TOKEN` (`components.securitySchemes`). */
const API_TOKEN = 'apiToken';
const OTHER_METHODS = {
  description: 'Any other method: 404, as an unknown endpoint (a POST without the token while `SP_API_TOKEN` is set: 401 first).',
  responses: limited({ '404': notFound, '400': malformed, '401': unauthorized, '413': tooLarge }),
};

const listItem = {
  type: 'object',
  required: ['id', 'address', 'amount', 'txid', 'vout', 'block_height', 'created_at'],
  properties: {
    id: { type: 'string', pattern: '^[0-9a-f]{64}:[0-9]+$', description: 'The outpoint `<txid>:<vout>`.' },
    address: ADDRESS,
    amount: { type: 'number', minimum: 0, description: "The output's value in BTC." },
    txid: TXID,
    vout: { type: 'integer', minimum: 0 },
    block_height: { ...HEIGHT, description: 'Null while pending.' },
    created_at: TIME,
    spent: { type: 'boolean', description: 'Whether a transaction seen by the scanner spends it.' },
  },
};

const PAYMENT_ID = { type: 'string', pattern: '^[0-9a-f]{64}:[0-9]+$', description: 'The outpoint `<txid>:<vout>`.' };
const PAGE = [
  { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: PAYMENTS_MAX_LIMIT, default: 10 } },
  { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0 } },
];
const invoice = {
  type: 'object',
  required: ['label', 'address', 'amount', 'received', 'pending', 'status', 'created_at', 'payments'],
  properties: {
    label: { type: 'string' },
    address: ADDRESS,
    amount: BTC,
    received: { type: 'number', minimum: 0, description: 'BTC confirmed to this label.' },
    pending: { type: 'number', minimum: 0, description: 'BTC in the mempool to this label.' },
    status: {
      enum: ['unpaid', 'pending', 'partial', 'paid', 'overpaid'],
      description: 'Within `INVOICE_TOLERANCE_SATS` of the amount counts as paid.',
    },
    created_at: TIME,
    payments: { type: 'array', items: PAYMENT_ID },
  },
};

const addressRecord = {
  type: 'object',
  required: ['address', 'label', 'amount', 'created_at'],
  properties: { address: ADDRESS, label: { type: 'string' }, amount: BTC, created_at: TIME },
};

const paths: Obj = {
  '/metrics': { get: metricsOperation() },
  '/health': {
    get: {
      operationId: 'health',
      summary: 'Liveness, with the scanner and the relay publisher',
      description: 'Not rate-limited. 200 while the process serves; `status` is `degraded` while the scanner cannot reach the node.',
      responses: {
        '200': {
          description: 'The health record.',
          content: jsonContent({
            type: 'object',
            required: ['status', 'timestamp', 'version', 'network', 'scanner', 'relay'],
            properties: {
              status: { enum: ['healthy', 'degraded'] },
              timestamp: TIME,
              version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+' },
              network: { enum: ['signet', 'regtest', 'testnet', 'mainnet'] },
              scanner: {
                type: 'object',
                required: [
                  'enabled',
                  'state',
                  'start_height',
                  'scanned_height',
                  'tip_height',
                  'blocks_per_second',
                  'failures',
                  'last_error',
                  'last_block_at',
                ],
                properties: {
                  enabled: { type: 'boolean' },
                  state: { enum: SCANNER_STATES },
                  start_height: HEIGHT,
                  scanned_height: HEIGHT,
                  tip_height: HEIGHT,
                  blocks_per_second: { type: 'number', minimum: 0 },
                  failures: { type: 'integer', minimum: 0, description: 'Consecutive failed attempts to reach the node.' },
                  last_error: { type: ['string', 'null'] },
                  last_block_at: { type: ['string', 'null'], format: 'date-time' },
                  node: NODE,
                },
              },
              relay: {
                type: 'object',
                required: ['configured', 'connected', 'queued', 'dropped', 'acknowledged', 'rejected'],
                properties: Object.fromEntries([
                  ['configured', { type: 'boolean' }],
                  ['connected', { type: 'boolean' }],
                  ...['queued', 'dropped', 'acknowledged', 'rejected'].map((k) => [k, { type: 'integer', minimum: 0 }]),
                ] as [string, Obj][]),
              },
            },
          }),
        },
        ...unlimited,
      },
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/ready': {
    get: {
      operationId: 'ready',
      summary: 'Readiness: the scanner reaches the node and is let in',
      description:
        'Not rate-limited. 200 also when the scanner is disabled, and while the node is in its initial block download (with a `message`).',
      responses: {
        '200': {
          description: 'Ready.',
          headers: { 'Cache-Control': { required: true, schema: { const: 'no-store' } } },
          content: jsonContent({
            type: 'object',
            required: ['status', 'scanner'],
            properties: {
              status: { const: 'ready' },
              scanner: {
                type: 'object',
                properties: { enabled: { const: false }, state: { enum: SCANNER_STATES }, scanned_height: HEIGHT, tip_height: HEIGHT },
              },
              message: { type: 'string' },
              node: NODE,
            },
          }),
        },
        ...unlimited,
        '503': {
          description: 'Not ready, with the reason (or more than `MAX_IN_FLIGHT` requests in progress: the error record).',
          content: jsonContent({
            oneOf: [
              {
                type: 'object',
                required: ['status', 'reason', 'message'],
                properties: {
                  status: { const: 'unready' },
                  reason: { enum: ['starting', 'node-unreachable', 'credentials-refused', 'node-unavailable', 'node-error'] },
                  message: { type: 'string' },
                  node: NODE,
                },
              },
              (unlimited['503'] as { content: { 'application/json': { schema: Obj } } }).content['application/json'].schema,
            ],
          }),
        },
      },
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/generate-address': {
    post: {
      operationId: 'generateAddress',
      summary: 'The silent-payment address of a label (a BIP-352 label index m ≥ 1)',
      requestBody: {
        required: true,
        content: jsonContent({
          type: 'object',
          required: ['label', 'amount'],
          description: 'Other fields are ignored.',
          properties: {
            label: {
              type: 'string',
              minLength: 1,
              maxLength: LABEL_MAX_LENGTH,
              description: 'Not only white space, no control characters.',
            },
            amount: { ...BTC, description: 'The amount expected, in BTC: at most 8 decimals.' },
          },
        }),
      },
      responses: limited({
        '201': { description: 'A new label.', content: jsonContent(addressRecord) },
        '200': { description: 'An existing label: its stored record (first amount and time).', content: jsonContent(addressRecord) },
        '400': errorResponse('Not a JSON object, malformed JSON, a missing field (`MISSING_PARAMETER`), a bad label or amount.', [
          'INVALID_REQUEST',
          'MISSING_PARAMETER',
        ]),
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/payments': {
    get: {
      operationId: 'listPayments',
      summary: 'Payments received: pending first, then the newest block first',
      parameters: [
        ...PAGE,
        { name: 'status', in: 'query', required: false, schema: { enum: ['pending', 'confirmed'] } },
        { name: 'spent', in: 'query', required: false, schema: { enum: ['true', 'false'] } },
        {
          name: 'label',
          in: 'query',
          required: false,
          description: 'Payments to this label (none when it is unknown).',
          schema: { type: 'string' },
        },
      ],
      responses: limited({
        '200': {
          description: 'A page of payments.',
          content: jsonContent({
            type: 'object',
            required: ['payments', 'total', 'limit', 'offset'],
            properties: {
              payments: { type: 'array', items: listItem },
              total: { type: 'integer', minimum: 0 },
              limit: { type: 'integer', minimum: 1, maximum: PAYMENTS_MAX_LIMIT },
              offset: { type: 'integer', minimum: 0 },
            },
          }),
        },
        '400': errorResponse(
          '`<name> must be an integer from <min> to <max>`, a bad `status`, `spent` or `label` filter, or a malformed JSON body.',
          ['INVALID_REQUEST'],
        ),
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/payments/{id}': {
    get: {
      operationId: 'getPayment',
      summary: 'One payment, with its confirmations and status',
      parameters: [{ name: 'id', in: 'path', required: true, description: 'The outpoint `<txid>:<vout>`.', schema: { type: 'string' } }],
      responses: limited({
        '200': {
          description: 'The payment.',
          content: jsonContent({
            ...listItem,
            required: [...listItem.required, 'confirmations', 'status'],
            properties: {
              ...listItem.properties,
              confirmations: { type: 'integer', minimum: 0, description: 'Tip − block_height + 1; 0 while pending.' },
              status: { enum: ['pending', 'confirmed'] },
              output_key: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The taproot output key (x-only).' },
              tweak: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The BIP-352 tweak that, added to b_spend, spends it.' },
              label: { type: ['string', 'null'], description: 'The label paid, or null (unlabelled or change).' },
              spent_txid: { type: ['string', 'null'], pattern: '^[0-9a-f]{64}$' },
              spent_height: { ...HEIGHT, description: 'The block of the spend; null while unspent or in the mempool.' },
            },
          }),
        },
        '404': errorResponse('`payment not found` (`details: no payment with id <id>`).', ['NOT_FOUND']),
        '400': malformed,
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/balance': {
    get: {
      operationId: 'balance',
      summary: 'What the service holds: confirmed, pending, and spends in the mempool',
      responses: limited({
        '200': {
          description: 'The balance, in BTC.',
          content: jsonContent({
            type: 'object',
            required: ['confirmed', 'pending', 'spent_pending', 'utxo_count'],
            properties: {
              confirmed: { type: 'number', minimum: 0 },
              pending: { type: 'number', minimum: 0 },
              spent_pending: { type: 'number', minimum: 0, description: 'Confirmed outputs spent by a transaction in the mempool.' },
              utxo_count: { type: 'integer', minimum: 0 },
            },
          }),
        },
        '400': malformed,
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/labels': {
    get: {
      operationId: 'listLabels',
      summary: 'The labels as invoices, oldest first',
      parameters: PAGE,
      responses: limited({
        '200': {
          description: 'A page of invoices.',
          content: jsonContent({
            type: 'object',
            required: ['labels', 'total', 'limit', 'offset'],
            properties: {
              labels: { type: 'array', items: invoice },
              total: { type: 'integer', minimum: 0 },
              limit: { type: 'integer', minimum: 1, maximum: PAYMENTS_MAX_LIMIT },
              offset: { type: 'integer', minimum: 0 },
            },
          }),
        },
        '400': errorResponse('`<name> must be an integer from <min> to <max>`, or a malformed JSON body.', ['INVALID_REQUEST']),
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/labels/{label}': {
    get: {
      operationId: 'getLabel',
      summary: 'One label as an invoice',
      parameters: [{ name: 'label', in: 'path', required: true, description: 'The label, percent-encoded.', schema: { type: 'string' } }],
      responses: limited({
        '200': { description: 'The invoice.', content: jsonContent(invoice) },
        '404': errorResponse('`label not found` (`details: no label "<label>"`).', ['NOT_FOUND']),
        '400': malformed,
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/psbt': {
    post: {
      operationId: 'createPsbt',
      summary: 'An unsigned PSBT sweeping outputs to an address (b_spend signs offline)',
      requestBody: {
        required: true,
        content: jsonContent({
          type: 'object',
          required: ['to', 'fee_rate'],
          properties: {
            to: { type: 'string', maxLength: 200, description: "An address of the service's network." },
            fee_rate: { type: 'number', minimum: FEE_RATE_MIN, maximum: FEE_RATE_MAX, description: 'sat/vB.' },
            ids: {
              type: 'array',
              minItems: 1,
              maxItems: PSBT_MAX_INPUTS,
              uniqueItems: true,
              items: PAYMENT_ID,
              description: 'Confirmed unspent payments to spend (default: every one, at most ' + String(PSBT_MAX_INPUTS) + ').',
            },
          },
        }),
      },
      responses: limited({
        '200': {
          description: 'The PSBT (version 0, base64) and what it spends.',
          content: jsonContent({
            type: 'object',
            required: ['psbt', 'ids', 'to', 'input_total', 'amount', 'fee', 'fee_rate', 'vsize'],
            properties: {
              psbt: { type: 'string', pattern: '^cHNidP8', contentEncoding: 'base64' },
              ids: { type: 'array', items: PAYMENT_ID },
              to: { type: 'string' },
              input_total: { type: 'number', minimum: 0 },
              amount: { type: 'number', minimum: 0 },
              fee: { type: 'number', minimum: 0 },
              fee_rate: { type: 'number' },
              vsize: { type: 'integer', minimum: 1 },
            },
          }),
        },
        '400': errorResponse(
          'Not a JSON object, a missing `to` or `fee_rate` (`MISSING_PARAMETER`), a bad address, fee rate or ids, an unknown, spent or unconfirmed payment, nothing to sweep, an amount below the dust limit after the fee.',
          ['INVALID_REQUEST', 'MISSING_PARAMETER'],
        ),
        '413': tooLarge,
      }),
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/openapi.json': {
    get: {
      ...documentOperation('openapi', 'OpenAPI 3.1'),
      responses: { ...(documentOperation('openapi', 'OpenAPI 3.1').responses as Obj), ...unlimited },
    },
    'x-other-methods': OTHER_METHODS,
  },
};

/**
 * `paths` with their security, as src/write-auth.ts enforces it: every POST takes the bearer token
 * of `SP_API_TOKEN` (or nothing while it is unset: the empty requirement) and may answer 401;
 * every other operation is open (`security: []`).
 */
function withWriteAuth(described: Obj): Obj {
  const out: Obj = {};
  for (const [path, item] of Object.entries(described)) {
    const secured: Obj = {};
    for (const [method, operation] of Object.entries(item as Obj)) {
      if (method.startsWith('x-')) secured[method] = operation;
      else if (method === 'post') {
        const op = operation as Obj;
        secured[method] = { ...op, security: [{ [API_TOKEN]: [] }, {}], responses: { ...(op.responses as Obj), '401': unauthorized } };
      } else secured[method] = { ...(operation as Obj), security: [] };
    }
    out[path] = secured;
  }
  return out;
}

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'silent-payments',
    version: '1.0.0',
    summary: 'BIP-352 silent-payment addresses by label, and the payments the scanner found.',
    description:
      'Reads are open; with `SP_API_TOKEN` set, every POST needs `Authorization: Bearer <token>` (the `apiToken` scheme; 401 otherwise). Bind to localhost or put a proxy in front for anything more. Limits (docs/silent-payments.md, "Limits"): ' +
      '100 requests a minute per address (`RATE_LIMIT_PER_MINUTE`, 429; `/health`, `/ready` and this document not counted); body `MAX_BODY_BYTES` (413); ' +
      '`MAX_CONNECTIONS` and `MAX_CONNECTIONS_PER_IP` (closed at once); 30 s per request (`REQUEST_TIMEOUT_MS`, 408); 256 in progress ' +
      `(\`MAX_IN_FLIGHT\`, 503); \`limit\` at most ${PAYMENTS_MAX_LIMIT}, labels at most ${LABEL_MAX_LENGTH} characters (400). ` +
      'Errors are the record `{error, code, details?}`.',
  },
  servers: [{ url: 'http://localhost:8000' }],
  paths: withWriteAuth(paths),
  components: {
    securitySchemes: {
      [API_TOKEN]: {
        type: 'http',
        scheme: 'bearer',
        description:
          '`SP_API_TOKEN` (16 characters or more), required by every POST while it is set (compared in constant time); unset, writes are open too.',
      },
    },
  },
  'x-unmatched-paths': {
    description:
      'Any other path: 404 `no such endpoint: <METHOD> <path>` (a POST without the token while `SP_API_TOKEN` is set: 401 first).',
    responses: limited({ '404': notFound, '400': malformed, '401': unauthorized, '413': tooLarge }),
  },
};
