import { documentOperation, errorResponse, guardResponses, jsonContent, rateLimitHeaderObjects, withHeaders } from '@repo/api-contract';
import { LABEL_MAX_LENGTH, PAYMENTS_MAX_LIMIT } from './config';

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
const OTHER_METHODS = {
  description: 'Any other method: 404, as an unknown endpoint.',
  responses: limited({ '404': notFound, '400': malformed, '413': tooLarge }),
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
  },
};

const addressRecord = {
  type: 'object',
  required: ['address', 'label', 'amount', 'created_at'],
  properties: { address: ADDRESS, label: { type: 'string' }, amount: BTC, created_at: TIME },
};

const paths: Obj = {
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
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: PAYMENTS_MAX_LIMIT, default: 10 } },
        { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0 } },
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
        '400': errorResponse('`<name> must be an integer from <min> to <max>`, or a malformed JSON body.', ['INVALID_REQUEST']),
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
  '/openapi.json': {
    get: {
      ...documentOperation('openapi', 'OpenAPI 3.1'),
      responses: { ...(documentOperation('openapi', 'OpenAPI 3.1').responses as Obj), ...unlimited },
    },
    'x-other-methods': OTHER_METHODS,
  },
};

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'silent-payments',
    version: '1.0.0',
    summary: 'BIP-352 silent-payment addresses by label, and the payments the scanner found.',
    description:
      'No authentication: bind to localhost or put an authenticating proxy in front. Limits (docs/silent-payments.md, "Limits"): ' +
      '100 requests a minute per address (`RATE_LIMIT_PER_MINUTE`, 429; `/health`, `/ready` and this document not counted); body `MAX_BODY_BYTES` (413); ' +
      '`MAX_CONNECTIONS` and `MAX_CONNECTIONS_PER_IP` (closed at once); 30 s per request (`REQUEST_TIMEOUT_MS`, 408); 256 in progress ' +
      `(\`MAX_IN_FLIGHT\`, 503); \`limit\` at most ${PAYMENTS_MAX_LIMIT}, labels at most ${LABEL_MAX_LENGTH} characters (400). ` +
      'Errors are the record `{error, code, details?}`.',
  },
  servers: [{ url: 'http://localhost:8000' }],
  paths,
  'x-unmatched-paths': {
    description: 'Any other path: 404 `no such endpoint: <METHOD> <path>`.',
    responses: limited({ '404': notFound, '400': malformed, '413': tooLarge }),
  },
};
