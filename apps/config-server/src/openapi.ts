import { metricsOperation, readyOperation } from '@repo/metrics';
import { documentOperation, errorResponse, jsonContent, rateLimitHeaderObjects, withHeaders } from '@repo/api-contract';
import { FILE_VERSION_RE } from '@repo/crypto';
import { ALGORITHM, API_VERSION, COMMON_HEADERS, ENCRYPTION_TYPE, SERVICE_ID, SERVICE_NAME } from './constants';
import { ENCRYPTION_MODES } from './recipient';
import { VERSION_HEADER } from './routes/files';

/**
 * The config server's API as an OpenAPI 3.1 document (docs/config-server.md, "Endpoints",
 * "Response headers", "Errors", "Limits"; served at `GET /openapi.json`). The app's tests check
 * every answer they get against it.
 */

type Obj = Record<string, unknown>;

const err = (description: string, codes: string[], headers?: Obj) => errorResponse(description, codes, headers);
const retryAfter = (seconds: string) => ({
  'Retry-After': { description: `Seconds to wait: ${seconds}.`, schema: { type: 'string', pattern: '^[0-9]+$' } },
});

/** Refusals any request may get, from the guards in front of every route (docs/config-server.md, "Errors"). */
const GUARDS: Obj = {
  '400': err(
    'Recipient headers incomplete or malformed, an `API-Version` header with another major version (`unsupported API version`), or an HTTP/1.1 request without `Host` (`INVALID_REQUEST`, `malformed HTTP request`; the connection is closed).',
    ['MISSING_PARAMETER', 'INVALID_PARAMETER', 'INVALID_REQUEST'],
  ),
  '408': err('Not answered within `REQUEST_TIMEOUT_MS` (30 s; a `?wait=` request: its wait plus that).', ['REQUEST_TIMEOUT']),
  '413': err('A declared body over `MAX_REQUEST_BYTES` (1 MiB): no endpoint takes a body.', ['PAYLOAD_TOO_LARGE']),
  '429': err('Over the per-address rate limit (100 a minute, 10 a second by default).', ['RATE_LIMITED'], rateLimitHeaderObjects(true)),
  '500': err('Anything unexpected (logged with its cause).', ['INTERNAL_ERROR']),
  '503': err(
    'Maintenance (`details: maintenance`, `Retry-After: 60`), more than `MAX_IN_FLIGHT` requests in progress (`overloaded`, `Retry-After: 1`), or more than `MAX_WAITING` waiting (`too many waiting requests`).',
    ['SERVICE_UNAVAILABLE'],
    retryAfter('60 for maintenance, 1 when overloaded'),
  ),
};

/** The endpoints `/info` always names. */
const INFO_ENDPOINTS = ['GET /<env>/<file>', 'GET /health', 'GET /info'];

const OTHER_METHODS = {
  description: 'Any other method than GET and HEAD: 404, as an unknown endpoint.',
  responses: { '404': err('No such endpoint: `no such endpoint: <METHOD> <path>`.', ['FILE_NOT_FOUND']), ...GUARDS },
};

const VERSION = { type: 'string', pattern: FILE_VERSION_RE.source, description: 'The version: 128 bits of HMAC-SHA256, base64url.' };
const versionHeaders = {
  [VERSION_HEADER]: {
    required: true,
    description: 'The version of the rendering served (docs/config-server.md, "Versions").',
    schema: VERSION,
  },
  ETag: {
    required: true,
    description: 'The same version, as a strong entity tag.',
    schema: { type: 'string', pattern: `^"${FILE_VERSION_RE.source.slice(1, -1)}"$` }, // the version, quoted
  },
  'Cache-Control': { required: true, schema: { const: 'no-store' } },
  Vary: { required: true, schema: { const: 'X-Client-Public-Key, X-Client-Kem' } },
};

const fileOperation = {
  operationId: 'getFile',
  summary: 'An encrypted configuration file',
  description:
    "The file of `storage/<env>/<file>`, substituted when it is UTF-8 text, sealed and base64-encoded: under the environment's key " +
    '(`Base64(nonce || ciphertext || tag)`, ChaCha20-Poly1305), or with `X-Client-Kem` and `X-Client-Public-Key` sealed with HPKE to ' +
    'that registered key (`Base64(enc || ciphertext || tag)`). Checks in order: path rules (403), an empty file (400), parameter rules ' +
    '(400), recipient headers (400, 403), the file (404), its size (500).',
  parameters: [
    {
      name: 'env',
      in: 'path',
      required: true,
      description: '1 to 50 letters, digits and hyphens.',
      schema: { type: 'string', pattern: '^[A-Za-z0-9-]{1,50}$' },
    },
    {
      name: 'file',
      in: 'path',
      required: true,
      description: '1 to 255 characters after percent-decoding, a `/`-separated path relative to `storage/<env>/`.',
      schema: { type: 'string', minLength: 1 },
      'x-multi-segment': true,
    },
    {
      name: 'version',
      in: 'query',
      required: false,
      description: 'An earlier version, served exactly as it was (sealed afresh).',
      schema: VERSION,
    },
    {
      name: 'wait',
      in: 'query',
      required: false,
      description: 'With `If-None-Match`: answer when the version changes, or 304 after this many seconds (0 to the request timeout).',
      schema: { type: 'integer', minimum: 0 },
    },
    {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: '`"<version>"`: 304 when it is the current version.',
      schema: { type: 'string' },
    },
    {
      name: 'X-Client-Kem',
      in: 'header',
      required: false,
      description: 'Recipient mode: `X25519` or `X-Wing` (case-insensitive, `xwing` accepted), with `X-Client-Public-Key`.',
      schema: { type: 'string' },
    },
    {
      name: 'X-Client-Public-Key',
      in: 'header',
      required: false,
      description: 'Recipient mode: the registered public key, standard base64 (32 bytes for X25519, 1216 for X-Wing).',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': {
      description: 'The sealed file.',
      headers: {
        ...versionHeaders,
        'Content-Disposition': {
          required: true,
          description: '`attachment; filename="<last segment>"`, plus `filename*=UTF-8\'\'…` for a non-ASCII name (RFC 6266, RFC 8187).',
          schema: { type: 'string', pattern: '^attachment; filename="' },
        },
        'X-Encryption-Mode': { required: true, schema: { enum: Object.values(ENCRYPTION_MODES) } },
        'X-HPKE-Suite': { required: false, description: 'Recipient mode only: the HPKE suite.', schema: { type: 'string' } },
      },
      content: {
        'application/octet-stream': {
          schema: {
            type: 'string',
            contentEncoding: 'base64',
            pattern: '^[A-Za-z0-9+/]*={0,2}$',
            description: 'The sealed file, base64 (RFC 4648, section 4).',
          },
        },
      },
    },
    '304': { description: '`If-None-Match` names the current version, or a `?wait=` ended with no change.', headers: versionHeaders },
    ...GUARDS,
    '400': err(
      'An empty `file` (`MISSING_PARAMETER`), a parameter breaking its rule or malformed percent-encoding, `?wait=` malformed or with `version`, recipient headers incomplete or malformed, another major `API-Version` (`INVALID_PARAMETER`); an HTTP/1.1 request without `Host` (`INVALID_REQUEST`).',
      ['MISSING_PARAMETER', 'INVALID_PARAMETER', 'INVALID_REQUEST'],
    ),
    '403': err(
      'A traversal attempt in any spelling (docs/config-server.md, "Path rules"), or a recipient key not registered for the environment.',
      ['ACCESS_DENIED'],
    ),
    '404': err(
      'A missing environment or file, a directory, a dotfile (`FILE_NOT_FOUND`); `?version=` never served or no longer kept (`VERSION_NOT_FOUND`).',
      ['FILE_NOT_FOUND', 'VERSION_NOT_FOUND'],
    ),
    '500': err(
      'A file over `MAX_FILE_BYTES` (`file too large`), a substituted output over it (`variable processing error`), anything unexpected.',
      ['INTERNAL_ERROR'],
    ),
  },
};

const healthOperation = {
  operationId: 'health',
  summary: 'Able to serve: the storage directory is readable',
  responses: {
    '200': {
      description: 'Healthy.',
      content: jsonContent({
        type: 'object',
        required: ['status', 'service', 'encryption', 'algorithm'],
        properties: {
          status: { const: 'healthy' },
          service: { const: SERVICE_ID },
          encryption: { const: ENCRYPTION_TYPE },
          algorithm: { const: ALGORITHM },
        },
      }),
    },
    ...GUARDS,
    '500': err('The storage directory is unavailable (`details: storage directory unavailable`), or anything unexpected.', [
      'INTERNAL_ERROR',
    ]),
  },
};

const infoOperation = {
  operationId: 'info',
  summary: 'What the service is and serves',
  responses: {
    '200': {
      description: 'The info record.',
      content: jsonContent({
        type: 'object',
        required: ['name', 'version', 'domain', 'port', 'protocol', 'encryption', 'endpoints'],
        properties: {
          name: { const: SERVICE_NAME },
          version: { const: API_VERSION },
          domain: { type: 'string', description: '`PUBLIC_DOMAIN`.' },
          port: { type: 'integer' },
          protocol: { const: 'HTTPS' },
          encryption: { const: ENCRYPTION_TYPE },
          endpoints: {
            type: 'object',
            required: INFO_ENDPOINTS,
            properties: Object.fromEntries(INFO_ENDPOINTS.map((endpoint) => [endpoint, { type: 'string' }])),
            additionalProperties: { type: 'string' },
          },
        },
      }),
    },
    ...GUARDS,
  },
};

const documentOp = documentOperation('openapi', 'OpenAPI 3.1');

/** Headers every response carries, errors included (docs/config-server.md, "Response headers"). */
const everyResponse: Obj = {
  ...Object.fromEntries(Object.entries(COMMON_HEADERS).map(([name, value]) => [name, { required: true, schema: { const: value } }])),
  ...rateLimitHeaderObjects(false),
};

const paths: Obj = {
  '/health': { get: healthOperation, 'x-other-methods': OTHER_METHODS },
  '/ready': { get: behindGuards(readyOperation('ready', ['starting', 'storage-unavailable', 'keys-unavailable'])) },
  '/metrics': { get: behindGuards(metricsOperation()) },
  '/info': { get: infoOperation, 'x-other-methods': OTHER_METHODS },
  '/openapi.json': {
    get: {
      ...documentOp,
      responses: {
        ...(documentOp.responses as Obj),
        '400': err('An HTTP/1.1 request without `Host` (`malformed HTTP request`; the connection is closed).', ['INVALID_REQUEST']),
        '500': GUARDS['500'],
      },
    },
    'x-other-methods': OTHER_METHODS,
  },
  '/{env}/{file}': { get: fileOperation, 'x-other-methods': OTHER_METHODS },
};

/** An operation of a route behind the guards: their refusals, unless the operation describes that status itself. */
function behindGuards(operation: Obj): Obj {
  return { ...operation, responses: { ...GUARDS, ...(operation.responses as Obj) } };
}

function addHeaders(operationLike: Obj): Obj {
  return { ...operationLike, responses: withHeaders(operationLike.responses as Obj, everyResponse) };
}

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'config-server',
    version: API_VERSION,
    summary: 'Encrypted configuration files, one folder per environment, over HTTPS only.',
    description:
      'Every response carries `X-Encryption-Type`, `X-Algorithm`, `API-Version`, `Supported-Versions` and (but `/openapi.json`) the ' +
      '`X-RateLimit-*` headers. Limits (docs/config-server.md, "Limits"): files 10 MiB (`MAX_FILE_BYTES`, 500); requests 1 MiB ' +
      '(`MAX_REQUEST_BYTES`, 413); 30 s per request (`REQUEST_TIMEOUT_MS`, 408); 100 requests a minute and 10 a second per address ' +
      '(`RATE_LIMIT_PER_MINUTE`, `RATE_LIMIT_PER_SECOND`, 429); 50 connections per address (`MAX_CONNECTIONS_PER_IP`: closed before TLS); ' +
      '256 requests in progress (`MAX_IN_FLIGHT`, 503); 10000 waiting (`MAX_WAITING`, 503); `env` 1 to 50 characters, `file` 1 to 255 (400). ' +
      'Errors are the record `{error, code, details?}`.',
  },
  servers: [{ url: 'https://localhost:6666' }],
  // No endpoint takes a token: a file is sealed to its environment's key or to a registered client
  // key, so only a holder of that key can open it (docs/config-server.md, "Authentication").
  security: [],
  paths: Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(Object.entries(item as Obj).map(([method, op]) => [method, addHeaders(op as Obj)])),
    ]),
  ),
  'x-unmatched-paths': addHeaders({
    description:
      'Any other path: 404 `no such endpoint`, or what the file route answers an empty or unsafe path (`/<env>/`: 400; `/..`: 403).',
    responses: {
      '404': err('No such endpoint.', ['FILE_NOT_FOUND']),
      ...GUARDS,
      '403': err('A traversal attempt.', ['ACCESS_DENIED']),
    },
  }),
};
