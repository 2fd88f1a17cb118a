import type { FieldSpec } from './fields';

/**
 * Who sends a message: `sync` (a relay about itself, to its clients and direct peers), `event`
 * (published by the silent-payment service, stored, replayed and forwarded over the mesh),
 * `command` (client to relay), `reply` (relay to the connection that asked), `peer` (relay to
 * relay only).
 */
export type MessageRole = 'sync' | 'event' | 'command' | 'reply' | 'peer';
/**
 * The token scope a client needs to receive a message: `events` (state, health, metrics,
 * BlockScanned: public unless RELAY_AUTH_TOKEN is set) or `payments` (the payment events).
 */
export type Scope = 'events' | 'payments';

/** One row of {@link MESSAGES}. */
export interface MessageSpec {
  role: MessageRole;
  /** Subscribable messages (sync and event) only. */
  scope?: Scope;
  fields: Readonly<Record<string, FieldSpec>>;
}

/**
 * Every message of the relay's WebSocket with its fields: the one table from which the
 * TypeScript types ({@link DataOf}), the validation and the relay's routing by role are derived.
 * A message may carry more fields than listed (they are passed on untouched); a listed field
 * must be there (unless marked `?`) with its kind. See docs/relay.md, "WebSocket".
 */
export const MESSAGES = {
  StateSync: {
    role: 'sync',
    scope: 'events',
    fields: {
      relay_id: 'string',
      state: 'string',
      version: 'string',
      uptime: 'non-negative integer',
      connected_relays: 'non-negative integer?',
      last_block_height: 'non-negative integer?',
    },
  },
  HealthSync: {
    role: 'sync',
    scope: 'events',
    fields: {
      relay_id: 'string',
      status: 'string',
      uptime: 'non-negative integer',
      cpu_usage: 'number',
      memory_usage: 'number',
      memory_rss_bytes: 'non-negative integer?',
      heap_used_bytes: 'non-negative integer?',
    },
  },
  MetricsSync: {
    role: 'sync',
    scope: 'events',
    fields: {
      relay_id: 'string',
      messages_sent: 'non-negative integer',
      messages_received: 'non-negative integer',
      sync_errors: 'non-negative integer',
      connected_relays: 'non-negative integer',
    },
  },
  TransactionReceived: {
    role: 'event',
    scope: 'payments',
    fields: {
      txid: 'string',
      amount: 'number',
      address: 'string',
      block_height: 'non-negative integer',
      confirmations: 'non-negative integer',
    },
  },
  BlockScanned: {
    role: 'event',
    scope: 'events',
    fields: {
      block_height: 'non-negative integer',
      block_hash: 'string',
      transactions_count: 'non-negative integer',
      silent_payments_found: 'non-negative integer',
    },
  },
  PaymentReorged: {
    role: 'event',
    scope: 'payments',
    fields: {
      txid: 'string',
      vout: 'non-negative integer',
      address: 'string',
      amount: 'number',
      old_block_height: 'non-negative integer',
      old_block_hash: 'string',
    },
  },
  PaymentSpent: {
    role: 'event',
    scope: 'payments',
    fields: {
      txid: 'string',
      vout: 'non-negative integer',
      spent_txid: 'string',
      block_height: 'non-negative integer or null',
    },
  },
  InvoicePaid: {
    role: 'event',
    scope: 'payments',
    fields: {
      label: 'string',
      address: 'string',
      amount: 'number',
      received: 'number',
      status: 'string',
    },
  },
  ping: { role: 'command', fields: {} },
  get_status: { role: 'command', fields: {} },
  subscribe: { role: 'command', fields: { types: 'event types?', since: 'event id or time?' } },
  pong: { role: 'reply', fields: { relay_id: 'string' } },
  status: {
    role: 'reply',
    fields: {
      relay_id: 'string',
      status: 'string',
      uptime: 'non-negative integer',
      connected_relays: 'non-negative integer',
      last_block_height: 'non-negative integer',
    },
  },
  subscribed: { role: 'reply', fields: { types: 'event types or all', since: 'event id or time?' } },
  ack: { role: 'reply', fields: {} },
  error: {
    role: 'reply',
    fields: {
      code: 'string',
      message: 'string',
      details: 'string',
      oldest_id: 'string?',
      oldest_timestamp: 'non-negative integer?',
    },
  },
  // `since` (ms): the last time the sender was linked to the receiver; the receiver answers by
  // sending the events it stored from then on (docs/relay.md, "The mesh heals").
  hello: { role: 'peer', fields: { relay_id: 'string', version: 'string?', since: 'non-negative integer?' } },
  sync_request: { role: 'peer', fields: { sync_type: 'string' } },
  sync_response: { role: 'peer', fields: { relay_id: 'string', sync_type: 'string', messages: 'array' } },
} as const satisfies Readonly<Record<string, MessageSpec>>;
