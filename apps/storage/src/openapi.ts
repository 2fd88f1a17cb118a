import { metricsOperation, readyOperation } from '@repo/metrics';
import { documentOperation, errorResponse, guardResponses, jsonContent, rateLimitHeaderObjects, withHeaders } from '@repo/api-contract';
import { SERVICE_VERSION } from './routes/health';
import { ROUTE_PREFIXES } from './routes/storage';

/**
 * The storage API as an OpenAPI 3.1 document (docs/storage.md, "Endpoints", "Errors", "Limits";
 * served at `GET /openapi.json`). Built from the routes' own constants; the app's tests check
 * every answer they get against it.
 */

const HEX64 = { type: 'string', pattern: '^[0-9a-fA-F]{64}$' };
const LOWER_HEX64 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const EXPIRES_AT = { type: ['string', 'null'], format: 'date-time', description: 'ISO 8601 expiry, or null when the value never expires.' };
const TTL_REMAINING = {
  type: ['integer', 'null'],
  minimum: 1,
  description: 'Whole seconds until expiry, rounded up (a live value never shows 0), or null when permanent.',
};

const keyParameter = {
  name: 'key',
  in: 'path',
  required: true,
  description: '64 hex characters, either case (keys are case-insensitive, answered in lower case).',
  schema: HEX64,
};
/** The one token of this API: a value's write token, sent as `Authorization: Bearer <write_token>` (RFC 6750). */
const SECURITY_SCHEMES = {
  writeToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: '64 hex characters',
    description:
      'The `write_token` of the store answer (docs/storage.md, "Write tokens"): the capability to delete or touch that one value. ' +
      "Missing or not 64 hex characters: 401 with `WWW-Authenticate: Bearer`; another value's token: 403.",
  },
};
/** Delete and touch need the value's write token. */
const WRITE_TOKEN = [{ writeToken: [] }];

const rateLimit = rateLimitHeaderObjects(false);
const invalid = (what: string) => errorResponse(`Invalid request: ${what}.`, ['INVALID_REQUEST']);
const notFound = errorResponse('No value is stored under this key, or it has expired.', ['NOT_FOUND']);
const unauthorized = errorResponse(
  'No `Authorization: Bearer <write_token>`, or a token that is not 64 hex characters.',
  ['UNAUTHORIZED'],
  {
    'WWW-Authenticate': {
      required: true,
      description: '`Bearer realm="storage"`, with `error="invalid_token"` for a malformed token (RFC 6750).',
      schema: { type: 'string', pattern: '^Bearer realm="storage"' },
    },
  },
);
const forbidden = errorResponse(
  "The token is not this value's, or the value was stored before write tokens existed (it has none and stays immutable).",
  ['ACCESS_DENIED'],
);
const tooLarge = errorResponse('A body over `MAX_BODY_BYTES` (default 1 MiB).', ['PAYLOAD_TOO_LARGE']);
const compressed = errorResponse('A JSON body sent with a `Content-Encoding` other than `identity`: it is not read.', [
  'UNSUPPORTED_MEDIA_TYPE',
]);
/** What reading a JSON body may refuse, on every route (the body is read before routing). */
const bodyRefusals = { '413': tooLarge, '415': compressed };
const guards = guardResponses({
  rateLimited: true,
  dependency: 'the storage backend (Redis) does not answer (details `storage backend unavailable`)',
});
const methodNotAllowed = (allow: string) => ({
  responses: {
    '405': errorResponse(`Another method than ${allow}.`, ['METHOD_NOT_ALLOWED'], {
      Allow: { required: true, schema: { type: 'string', const: allow } },
    }),
    '400': invalid('a malformed JSON body'),
    ...bodyRefusals,
    ...guards,
  },
});

const storeRequest = {
  type: 'object',
  required: ['key', 'value'],
  description: 'Other fields are ignored.',
  properties: {
    key: HEX64,
    value: { type: 'string', pattern: '^([0-9a-fA-F]{2})+$', description: 'Non-empty hex of even length (whole bytes), either case.' },
    ttl: {
      type: ['integer', 'null'],
      minimum: 1,
      description:
        'Seconds, 1 to `STORAGE_MAX_TTL_SECONDS` (default 31536000). Absent or null: 86400 s, or never with the permanent option.',
    },
  },
};

const touchRequest = {
  type: 'object',
  description:
    '`{"ttl": n}` (the rules of store), `{"permanent": true}` (only with the permanent option) or `{}` (the store default). Not both.',
  properties: { ttl: { type: ['integer', 'null'], minimum: 1 }, permanent: { type: 'boolean' } },
};

const healthRecord = {
  type: 'object',
  required: ['status', 'service', 'version', 'backend', 'permanent', 'timestamp'],
  properties: {
    status: { const: 'healthy' },
    service: { const: 'storage' },
    version: { const: SERVICE_VERSION },
    backend: { enum: ['sqlite', 'redis'] },
    permanent: { type: 'boolean', description: 'Whether values without `ttl` never expire.' },
    timestamp: { type: 'string', format: 'date-time' },
  },
};

/** The operations of one path prefix (`/storage` behind the proxy, `` alone): docs/storage.md, "Endpoints". */
function pathsFor(prefix: string): Record<string, unknown> {
  const id = (name: string) => (prefix === '' ? name : `${name}Prefixed`);
  const note = prefix === '' ? '' : ' (the same route behind the proxy of `/storage/`)';
  return {
    [`${prefix}/store`]: {
      post: {
        operationId: id('store'),
        summary: `Store a value under a key${note}`,
        requestBody: { required: true, content: jsonContent(storeRequest) },
        responses: withHeaders(
          {
            '200': {
              description: 'Stored and durable (committed before the answer).',
              content: jsonContent({
                type: 'object',
                required: ['message', 'key', 'expires_at', 'write_token'],
                properties: {
                  message: { const: 'value stored' },
                  key: LOWER_HEX64,
                  expires_at: EXPIRES_AT,
                  write_token: { ...LOWER_HEX64, description: 'The capability to delete or touch this value; shown only here.' },
                },
              }),
            },
            '400': invalid('a body that is not a JSON object or not sent as JSON, malformed JSON, a bad key, value or ttl'),
            '409': errorResponse('The key holds a value that has not expired (values are never overwritten).', ['CONFLICT']),
            ...bodyRefusals,
            ...guards,
          },
          rateLimit,
        ),
      },
      'x-other-methods': methodNotAllowed('POST'),
    },
    [`${prefix}/retrieve/{key}`]: {
      get: {
        operationId: id('retrieve'),
        summary: `Read the value of a key${note}`,
        parameters: [keyParameter],
        responses: withHeaders(
          {
            '200': {
              description: 'The value.',
              content: jsonContent({
                type: 'object',
                required: ['key', 'value', 'expires_at', 'ttl_remaining'],
                properties: {
                  key: LOWER_HEX64,
                  value: { type: 'string', pattern: '^([0-9a-f]{2})+$' },
                  expires_at: EXPIRES_AT,
                  ttl_remaining: TTL_REMAINING,
                },
              }),
            },
            '400': invalid('a bad key, or a malformed JSON body'),
            '404': notFound,
            ...bodyRefusals,
            ...guards,
          },
          rateLimit,
        ),
      },
      'x-other-methods': methodNotAllowed('GET'),
    },
    [`${prefix}/touch/{key}`]: {
      post: {
        operationId: id('touch'),
        summary: `Set a new lifetime, counted from now${note}`,
        parameters: [keyParameter],
        security: WRITE_TOKEN,
        requestBody: { required: false, content: jsonContent(touchRequest) },
        responses: withHeaders(
          {
            '200': {
              description: 'The new lifetime, durable.',
              content: jsonContent({
                type: 'object',
                required: ['message', 'key', 'expires_at', 'ttl_remaining'],
                properties: {
                  message: { const: 'expiry updated' },
                  key: LOWER_HEX64,
                  expires_at: EXPIRES_AT,
                  ttl_remaining: TTL_REMAINING,
                },
              }),
            },
            '400': invalid('a bad key, body, ttl or permanent'),
            '401': unauthorized,
            '403': forbidden,
            '404': notFound,
            ...bodyRefusals,
            ...guards,
          },
          rateLimit,
        ),
      },
      'x-other-methods': methodNotAllowed('POST'),
    },
    [`${prefix}/{key}`]: {
      delete: {
        operationId: id('delete'),
        summary: `Delete a value with its write token${note}`,
        description: "Checks in this order: the key (400), the token's presence and shape (401), the value (404), the token (403).",
        parameters: [keyParameter],
        security: WRITE_TOKEN,
        responses: withHeaders(
          {
            '200': {
              description: 'Deleted, durably; the key is free again.',
              content: jsonContent({
                type: 'object',
                required: ['message', 'key'],
                properties: { message: { const: 'value deleted' }, key: LOWER_HEX64 },
              }),
            },
            '400': invalid('a bad key'),
            '401': unauthorized,
            '403': forbidden,
            '404': notFound,
            ...bodyRefusals,
            ...guards,
          },
          rateLimit,
        ),
      },
      'x-other-methods': {
        description: 'Only DELETE is routed here; another method is an unknown path.',
        responses: withHeaders({ '404': errorResponse('No such endpoint.', ['NOT_FOUND']), ...bodyRefusals, ...guards }, rateLimit),
      },
    },
    [`${prefix}/health`]: {
      get: {
        operationId: id('health'),
        summary: `Health of the service and its backend${note}`,
        description: 'Not rate-limited.',
        responses: {
          '200': { description: 'The backend answers.', content: jsonContent(healthRecord) },
          ...noRateLimit(guards),
          '503': errorResponse('The backend does not answer (details `storage backend unavailable`), or overloaded.', [
            'SERVICE_UNAVAILABLE',
          ]),
        },
      },
    },
    [`${prefix}/ready`]: { get: withLimits(readyOperation(id('ready'), ['backend-unavailable'])) },
    [`${prefix}/openapi.json`]: {
      get: withGuards(documentOperation(id('openapi'), 'OpenAPI 3.1'), noRateLimit(guards)),
    },
  };
}

function withGuards(operation: Record<string, unknown>, responses: Record<string, unknown>): Record<string, unknown> {
  return { ...operation, responses: { ...(operation.responses as Record<string, unknown>), ...responses } };
}

/** The guards' answers (408, 503, …) an operation does not describe itself: every route passes the guards but the rate limit. */
function withLimits(operation: Record<string, unknown>): Record<string, unknown> {
  return { ...operation, responses: { ...noRateLimit(guards), ...(operation.responses as Record<string, unknown>) } };
}

function noRateLimit(responses: Record<string, unknown>): Record<string, unknown> {
  const { '429': _, ...rest } = responses;
  return rest;
}

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'storage',
    version: SERVICE_VERSION,
    summary: 'Key/value storage with a time-to-live: keys 64 hex characters, values hex.',
    description:
      'Every route answers with and without the `/storage` prefix. Limits (docs/storage.md, "Limits"): body 1 MiB (`MAX_BODY_BYTES`, 413; a `Content-Encoding` 415); ' +
      'ttl at most 31536000 s (`STORAGE_MAX_TTL_SECONDS`, 400); 120000 requests a minute and 5000 a second per client address ' +
      '(`RATE_LIMIT_PER_MINUTE`, `RATE_LIMIT_PER_SECOND`, 429; health and this document are not limited); 4096 connections, 256 per address ' +
      '(`MAX_CONNECTIONS`, `MAX_CONNECTIONS_PER_IP`: closed at once); 30 s per request (`REQUEST_TIMEOUT_MS`, 408); 2048 requests in progress ' +
      '(`MAX_IN_FLIGHT`, 503). Errors are the record `{error, code, details?}`.',
  },
  servers: [{ url: 'http://localhost:8081' }],
  // No token by default: only delete and touch name one (the value's write token).
  security: [],
  components: { securitySchemes: SECURITY_SCHEMES },
  paths: {
    ...Object.fromEntries(ROUTE_PREFIXES.flatMap((prefix) => Object.entries(pathsFor(prefix)))),
    '/metrics': { get: withLimits(metricsOperation()) },
  },
  'x-unmatched-paths': {
    description: 'Any path not listed (docs/storage.md, "Endpoints"): 404 `no such endpoint: <METHOD> <path>`.',
    responses: withHeaders(
      { '404': errorResponse('No such endpoint.', ['NOT_FOUND']), '400': invalid('a malformed JSON body'), ...bodyRefusals, ...guards },
      rateLimit,
    ),
  },
};
