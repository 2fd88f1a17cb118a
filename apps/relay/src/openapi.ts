import { metricsOperation, readyOperation } from '@repo/metrics';
import { documentOperation, jsonContent, rateLimitHeaderObjects, withHeaders } from '@repo/api-contract';
import { SYNC_REQUEST_TYPES, SYNC_TYPES } from '@repo/relay-protocol';
import { RELAY_VERSION } from './version';

/**
 * The relay's HTTP API (port 8091) as an OpenAPI 3.1 document (docs/relay.md, "HTTP endpoints",
 * "HTTP records", "POST /sync", "HTTP errors", "HTTP limits"; served at `GET /openapi.json`). The
 * app's tests check every answer they get against it.
 */

type Obj = Record<string, unknown>;

/** The relay's nested error record `{error: {code, message, details?}}` (docs/relay.md, "HTTP errors"). */
function nestedError(description: string, codes: string[], headers?: Obj): Obj {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: jsonContent({
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { enum: codes }, message: { type: 'string' }, details: { type: 'string' } },
        },
      },
    }),
  };
}

const COUNT = { type: 'integer', minimum: 0 };
const MS = { type: 'integer', minimum: 0, description: 'ms since the Unix epoch.' };
const counts = (names: string[]): Obj => Object.fromEntries(names.map((n) => [n, COUNT]));

const guards: Obj = {
  '408': nestedError('Not answered within `REQUEST_TIMEOUT_MS` (30 s).', ['REQUEST_TIMEOUT']),
  '429': nestedError('Over `RATE_LIMIT_PER_MINUTE` (200) for this address.', ['RATE_LIMITED'], rateLimitHeaderObjects(true)),
  '500': nestedError('Anything unexpected (logged).', ['INTERNAL_ERROR']),
  '503': nestedError('More than `MAX_HTTP_CONNECTIONS` (100) requests in progress.', ['SERVICE_UNAVAILABLE']),
};
const bodyErrors: Obj = {
  '400': nestedError('A malformed JSON body (`malformed JSON body`).', ['INVALID_REQUEST']),
  '413': nestedError('A body over `MAX_BODY_BYTES` (5 MiB).', ['PAYLOAD_TOO_LARGE']),
};
const notFound = nestedError('No such endpoint: `no such endpoint: <METHOD> <path>`.', ['NOT_FOUND']);
const limited = (responses: Obj): Obj => withHeaders({ ...bodyErrors, ...responses, ...guards }, rateLimitHeaderObjects(false));
const OTHER_METHODS = { description: 'Any other method: 404, as an unknown endpoint.', responses: limited({ '404': notFound }) };

const get = (operationId: string, summary: string, schema: Obj): Obj => ({
  get: { operationId, summary, responses: limited({ '200': { description: summary, content: jsonContent(schema) } }) },
  'x-other-methods': OTHER_METHODS,
});

const relayEntry = {
  type: 'object',
  required: ['relay_id', 'address', 'status', 'connected_since', 'last_heartbeat', 'direction', 'last_sync'],
  properties: {
    relay_id: { type: ['string', 'null'], description: "The peer's id (null for a configured peer never linked)." },
    address: { type: 'string', description: '`host:port` of the link.' },
    status: { enum: ['connected', 'disconnected'], description: '`disconnected`: a configured peer (RELAY_PEERS) not linked now.' },
    connected_since: { ...MS, type: ['integer', 'null'] },
    last_heartbeat: { ...MS, type: ['integer', 'null'], description: 'The last pong or message from the peer.' },
    direction: { enum: ['outbound', 'inbound'] },
    last_sync: {
      type: 'object',
      description: "The `data` of the peer's last sync message, by type.",
      propertyNames: { enum: [...SYNC_TYPES] },
      additionalProperties: { type: 'object' },
    },
    last_error: { type: 'string', description: 'A disconnected configured peer: why the last attempt failed.' },
    url: { type: 'string', description: 'A configured peer: the URL dialled.' },
  },
};

const documentGet = (operationId: string, kind: 'OpenAPI 3.1' | 'AsyncAPI 3'): Obj => {
  const op = documentOperation(operationId, kind);
  const { '429': _, ...unlimited } = guards;
  return { get: { ...op, responses: { ...(op.responses as Obj), ...unlimited } }, 'x-other-methods': OTHER_METHODS };
};

/** The tokens of the WebSocket upgrade (docs/relay.md, "WebSocket authentication"). */
const securitySchemes: Obj = {
  clientToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A client token: `RELAY_AUTH_TOKEN`, or a token of `RELAY_TOKEN_FILE` (its scopes decide what the client receives).',
  },
  clientTokenQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'The same client token as the query parameter `token` (browsers cannot set headers on a WebSocket).',
  },
  publishToken: {
    type: 'http',
    scheme: 'bearer',
    description: '`RELAY_PUBLISH_TOKEN`: the silent-payment service, which may publish events.',
  },
  meshToken: { type: 'http', scheme: 'bearer', description: '`RELAY_MESH_TOKEN` (by default the publish token): a peer relay.' },
};

/** `GET /` on the WebSocket port: the upgrade, with its tokens and refusals (docs/relay.md, "WebSocket limits"). */
const upgrade: Obj = {
  servers: [{ url: 'http://localhost:8090', description: 'The WebSocket port (`ws://`; `wss://` with TLS_CERT_FILE and TLS_KEY_FILE).' }],
  get: {
    operationId: 'websocket',
    summary: 'Open the WebSocket (its messages: `GET /asyncapi.json`)',
    description:
      'Any path upgrades. Without `RELAY_AUTH_TOKEN` a client may come without a token (scope `events`); a token that matches ' +
      'nothing is refused even then. Payment events need a token with the `payments` scope: a `subscribe` naming them without it ' +
      'is answered on the WebSocket with an `error` message `FORBIDDEN`, not with HTTP 403.',
    security: [{ clientToken: [] }, { clientTokenQuery: [] }, { publishToken: [] }, { meshToken: [] }, {}],
    parameters: [
      { name: 'Upgrade', in: 'header', required: true, schema: { const: 'websocket' } },
      { name: 'Sec-WebSocket-Key', in: 'header', required: true, schema: { type: 'string' } },
      { name: 'Sec-WebSocket-Version', in: 'header', required: true, schema: { const: '13' } },
    ],
    responses: {
      '101': { description: 'Switching protocols: the WebSocket is open.' },
      '400': nestedError('Two `Host` headers (`more than one Host header`), or a malformed handshake.', ['INVALID_REQUEST']),
      '401': nestedError(
        "A token was required (`RELAY_AUTH_TOKEN` set) and none came, or the token matches none of the relay's.",
        ['UNAUTHORIZED'],
        { 'WWW-Authenticate': { description: '`Bearer realm="relay"`', schema: { type: 'string' } } },
      ),
      '426': nestedError('A plain HTTP request: this port serves WebSocket only.', ['INVALID_REQUEST']),
      '503': nestedError(
        '`MAX_WS_CONNECTIONS` reached (its last tenth is kept for addresses with none open), or shutting down.',
        ['SERVICE_UNAVAILABLE'],
        {
          'Retry-After': { description: 'Seconds (5) before trying again.', schema: { type: 'string' } },
        },
      ),
    },
  },
};

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'relay HTTP',
    version: RELAY_VERSION,
    summary: "The relay's HTTP API: health, status, peers, metrics, and syncs on demand.",
    description:
      'The WebSocket (port 8090) is described by the AsyncAPI document at `GET /asyncapi.json`. Limits (docs/relay.md, "HTTP limits"): ' +
      '200 requests a minute per address on every endpoint but the two documents (`RATE_LIMIT_PER_MINUTE`, 429); body 5 MiB ' +
      '(`MAX_BODY_BYTES`, 413); 100 connections in all and per address (`MAX_HTTP_CONNECTIONS`: closed at once) and 100 requests in ' +
      'progress (503); 30 s per request (`REQUEST_TIMEOUT_MS`, 408). Errors are `{"error": {"code", "message", "details"?}}`.',
  },
  servers: [{ url: 'http://localhost:8091' }],
  // The HTTP API has no authentication (docs/relay.md, "Decisions": a trusted network); the tokens are the WebSocket's.
  security: [],
  paths: {
    '/': upgrade,
    '/ready': { get: readyOperation('ready', ['event-log-unwritable']) },
    '/health': get('health', 'The health record', {
      type: 'object',
      required: ['status', 'relay_id', 'uptime', 'version', 'connected_relays'],
      properties: {
        status: { const: 'healthy' },
        relay_id: { type: 'string' },
        uptime: COUNT,
        version: { type: 'string' },
        connected_relays: COUNT,
      },
    }),
    '/status': get('status', 'The status record', {
      type: 'object',
      required: ['relay_id', 'status', 'uptime', 'version', 'connected_relays', 'last_block_height', 'sync_metrics', 'connected_clients'],
      properties: {
        relay_id: { type: 'string' },
        status: { const: 'running' },
        uptime: COUNT,
        version: { type: 'string' },
        connected_relays: COUNT,
        last_block_height: COUNT,
        sync_metrics: {
          type: 'object',
          required: ['messages_sent', 'messages_received', 'sync_errors'],
          properties: counts(['messages_sent', 'messages_received', 'sync_errors']),
        },
        connected_clients: COUNT,
      },
    }),
    '/relays': get('relays', 'The peer relays: linked ones, and configured ones not linked now', {
      type: 'object',
      required: ['relays'],
      properties: { relays: { type: 'array', items: relayEntry } },
    }),
    '/metrics': get('metrics', 'The metrics record', {
      type: 'object',
      required: ['messages_sent', 'messages_received', 'sync_errors', 'last_sync_timestamp', 'connected_relays', 'mesh_health'],
      properties: {
        ...counts(['messages_sent', 'messages_received', 'sync_errors', 'connected_relays', 'connected_clients']),
        last_sync_timestamp: { ...MS, description: 'The last sync message sent to or received from a peer (0: never).' },
        mesh_health: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          description: 'The share of the configured peers linked now; 1 when none is configured.',
        },
        ...counts([
          'events_published',
          'events_stored',
          'events_replayed',
          'events_healed',
          'messages_rejected',
          'duplicates_dropped',
          'slow_consumers_dropped',
          'upgrades_refused',
          'peer_connect_failures',
        ]),
      },
    }),
    '/sync': {
      post: {
        operationId: 'sync',
        summary: "Ask a peer (or all) for a sync, or push this relay's own sync messages",
        description:
          'A peer target is sent `sync_request`; the answer waits for its `sync_response` (at most `RELAY_SYNC_TIMEOUT_MS`, 5 s).',
        requestBody: {
          required: true,
          content: jsonContent({
            type: 'object',
            required: ['sync_type', 'target_relay'],
            properties: {
              sync_type: { enum: [...SYNC_REQUEST_TYPES] },
              target_relay: {
                type: 'string',
                minLength: 1,
                maxLength: 64,
                description: "A peer's relay_id, `all`, or this relay's own id.",
              },
            },
          }),
        },
        responses: limited({
          '200': {
            description: 'The sync was done.',
            content: jsonContent({
              type: 'object',
              required: ['success', 'message', 'sync_id'],
              properties: { success: { const: true }, message: { type: 'string' }, sync_id: { type: 'string', format: 'uuid' } },
            }),
          },
          '400': nestedError('Not a JSON object, malformed JSON, a missing or bad `sync_type` or `target_relay`.', ['INVALID_REQUEST']),
          '404': nestedError('`unknown relay: <id>`: a target this relay has never been connected to.', ['NOT_FOUND']),
          '502': nestedError('The target is not connected now, `all` with no peer, or a peer did not answer in time.', [
            'CONNECTION_ERROR',
          ]),
        }),
      },
      'x-other-methods': OTHER_METHODS,
    },
    '/openapi.json': documentGet('openapi', 'OpenAPI 3.1'),
    '/asyncapi.json': documentGet('asyncapi', 'AsyncAPI 3'),
  },
  'x-unmatched-paths': { description: 'Any other path.', responses: limited({ '404': notFound }) },
  components: { securitySchemes },
};

// `GET /metrics` answers Prometheus text when `Accept` asks for it (README, "Operations").
const metricsOk = (OPENAPI.paths['/metrics'].get as { responses: Record<string, { content: Obj }> }).responses['200']!;
metricsOk.content['text/plain'] = (metricsOperation() as { responses: Record<string, { content: Obj }> }).responses['200']!.content[
  'text/plain'
];
