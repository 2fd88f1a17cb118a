import {
  COMMAND_TYPES,
  ERROR_CODES,
  EVENT_TYPES,
  MAX_ID_LENGTH,
  MESSAGES,
  PEER_MESSAGE_TYPES,
  SUBSCRIPTION_TYPES,
  SYNC_TYPES,
  type FieldKind,
  type FieldSpec,
  type MessageSpec,
} from '@repo/relay-protocol';
import { RELAY_VERSION } from './version';

/**
 * The relay's WebSocket as an AsyncAPI 3 document (docs/relay.md, "WebSocket envelope", "Client
 * commands", "Events", "Mesh protocol", "WebSocket errors"; served at `GET /asyncapi.json` on
 * the HTTP port). Every message schema is derived from the message table of
 * `@repo/relay-protocol`, the one the relay validates with, so the document cannot drift from it.
 */

type Obj = Record<string, unknown>;

/** The JSON Schema of a field kind of the table (see `matchesKind` in `@repo/relay-protocol`). */
export function kindSchema(kind: FieldKind): Obj {
  switch (kind) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'integer':
      return { type: 'integer' };
    case 'non-negative integer':
      return { type: 'integer', minimum: 0 };
    case 'non-negative integer or null':
      return { type: ['integer', 'null'], minimum: 0 };
    case 'boolean':
      return { type: 'boolean' };
    case 'object':
      return { type: 'object' };
    case 'array':
      return { type: 'array' };
    case 'event types':
      return { type: 'array', items: { enum: [...SUBSCRIPTION_TYPES] } };
    case 'event types or all':
      return { oneOf: [{ const: 'all' }, { type: 'array', items: { enum: [...SUBSCRIPTION_TYPES] } }] };
    case 'event id or time':
      return {
        oneOf: [
          { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, description: 'An event id.' },
          { type: 'integer', minimum: 0, description: 'A time, ms since the Unix epoch.' },
        ],
      };
  }
}

/** The `data` schema of a message: the table's fields (optional ones marked `?`); more fields are passed on. */
function dataSchema(fields: Readonly<Record<string, FieldSpec>>): Obj {
  const properties: Obj = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(fields)) {
    const optional = spec.endsWith('?');
    properties[name] = kindSchema((optional ? spec.slice(0, -1) : spec) as FieldKind);
    if (!optional) required.push(name);
  }
  return { type: 'object', required, properties };
}

const ROLE_TEXT: Record<MessageSpec['role'], string> = {
  sync: 'A relay about itself, to its clients and direct peers.',
  event: 'Published by the silent-payment service (publish token), stored, replayed and forwarded over the mesh.',
  command: 'Client to relay.',
  reply: 'Relay to the connection that asked (carries the id of the command or event it answers).',
  peer: 'Relay to relay only (mesh token).',
};

/** The envelope `{type, id, timestamp, data}` of message `type`. */
function messageObject(type: string, spec: MessageSpec): Obj {
  const scope = spec.scope ? ` Needs a token with the \`${spec.scope}\` scope to receive.` : '';
  const data = dataSchema(spec.fields);
  if (type === 'error') (data.properties as Obj).code = { enum: Object.values(ERROR_CODES) };
  return {
    name: type,
    title: type,
    summary: `${ROLE_TEXT[spec.role]}${scope}`,
    contentType: 'application/json',
    payload: {
      type: 'object',
      required: ['type', 'id', 'timestamp', 'data'],
      description: 'One JSON text frame. A client may omit `timestamp` and `data` in what it sends.',
      properties: {
        type: { const: type },
        id: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH },
        timestamp: { type: 'integer', minimum: 0, description: 'ms since the Unix epoch.' },
        data,
      },
    },
  };
}

const entries = Object.entries(MESSAGES) as [string, MessageSpec][];
const typesOf = (role: MessageSpec['role']) => entries.filter(([, s]) => s.role === role).map(([t]) => t);
const refs = (channel: string, types: readonly string[]) => types.map((t) => ({ $ref: `#/channels/${channel}/messages/${t}` }));

export const ASYNCAPI = {
  asyncapi: '3.0.0',
  info: {
    title: 'relay WebSocket',
    version: RELAY_VERSION,
    description:
      "The relay's WebSocket (port 8090): JSON text frames `{type, id, timestamp, data}`. Tokens on the upgrade request " +
      '(`Authorization: Bearer <token>` or `?token=`): refused with HTTP 401 `{"error": {"code": "UNAUTHORIZED", …}}` and ' +
      '`WWW-Authenticate: Bearer realm="relay"`. Limits (docs/relay.md, "WebSocket limits"): 1000 connections (`MAX_WS_CONNECTIONS`: HTTP 503 ' +
      'before the handshake, `Retry-After: 5`); frames of 1 MiB (`MAX_MESSAGE_BYTES`: closed with 1009); a ping every 30 s ' +
      '(`HEARTBEAT_INTERVAL_MS`: a silent connection is terminated); 4 MiB queued per client (`MAX_SEND_BUFFER_BYTES`: closed with 1008 ' +
      '`slow consumer`). A client without the publish or mesh token: frames of 16 KiB (`MAX_CLIENT_MESSAGE_BYTES`: 1009), 20 messages a ' +
      'second per connection and 100 per address (`CLIENT_MESSAGES_PER_SECOND`, `…_PER_IP`: dropped, an `error` once a second); without a ' +
      'token, closed with 1008 `idle: …` unless subscribed to a type within 60 s (`IDLE_CLIENT_TIMEOUT_MS`). JSON nested deeper than 32 ' +
      'levels: an `error`. `?since=<event id>` or `?since_time=<ms>` on the URL replays from there before any live event ' +
      '(the reply id is `since`). Other close codes: 1001 `relay shutting down`; 1008 `same relay_id`, `token revoked`. A plain HTTP request on this ' +
      'port is 426. A bad message is answered with an `error` message; the connection stays open.',
  },
  defaultContentType: 'application/json',
  servers: {
    ws: {
      host: 'localhost:8090',
      protocol: 'ws',
      security: [{ $ref: '#/components/securitySchemes/bearer' }, { $ref: '#/components/securitySchemes/queryToken' }],
    },
    wss: {
      host: 'localhost:8090',
      protocol: 'wss',
      description: 'With TLS_CERT_FILE and TLS_KEY_FILE.',
      security: [{ $ref: '#/components/securitySchemes/bearer' }],
    },
  },
  channels: {
    relay: {
      address: '/',
      title: 'The relay connection',
      description: 'Every message travels on the one connection, in both directions.',
      messages: Object.fromEntries(entries.map(([type]) => [type, { $ref: `#/components/messages/${type}` }])),
    },
  },
  operations: {
    sendSync: {
      action: 'send',
      channel: { $ref: '#/channels/relay' },
      summary: 'Its own StateSync, HealthSync and MetricsSync: on connection, every SYNC_INTERVAL_MS, on POST /sync.',
      messages: refs('relay', typesOf('sync')),
    },
    deliverEvents: {
      action: 'send',
      channel: { $ref: '#/channels/relay' },
      summary: 'Events to the clients whose subscription and token scopes take them; replayed from the log with `subscribe` `since`.',
      messages: refs('relay', EVENT_TYPES),
    },
    receiveEvents: {
      action: 'receive',
      channel: { $ref: '#/channels/relay' },
      summary: 'Events from a publisher (publish token) or a peer (mesh token); each is stored, then acknowledged with `ack`.',
      messages: refs('relay', EVENT_TYPES),
      reply: { channel: { $ref: '#/channels/relay' }, messages: refs('relay', ['ack', 'error']) },
    },
    receiveCommands: {
      action: 'receive',
      channel: { $ref: '#/channels/relay' },
      summary: '`ping` (→ `pong`), `get_status` (→ `status`), `subscribe` (→ `subscribed`, then a replay when `since` is given).',
      messages: refs('relay', COMMAND_TYPES),
      reply: { channel: { $ref: '#/channels/relay' }, messages: refs('relay', typesOf('reply')) },
    },
    mesh: {
      action: 'send',
      channel: { $ref: '#/channels/relay' },
      summary: 'Relay to relay (docs/relay.md, "Mesh protocol"): `hello`, `sync_request`, `sync_response`; both directions.',
      messages: refs('relay', PEER_MESSAGE_TYPES),
    },
    meshReceive: {
      action: 'receive',
      channel: { $ref: '#/channels/relay' },
      summary: 'The same messages from a peer, and its sync messages (recorded for GET /relays, not passed on).',
      messages: refs('relay', [...PEER_MESSAGE_TYPES, ...SYNC_TYPES]),
    },
  },
  components: {
    messages: Object.fromEntries(entries.map(([type, spec]) => [type, messageObject(type, spec)])),
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'The client token (RELAY_AUTH_TOKEN or RELAY_TOKEN_FILE), the publish token or the mesh token.',
      },
      queryToken: { type: 'httpApiKey', in: 'query', name: 'token', description: 'The same token as the query parameter `token`.' },
    },
  },
};
