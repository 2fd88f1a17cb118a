import { randomUUID } from 'node:crypto';

/** The WebSocket envelope (docs/relay.md, "WebSocket envelope"); `timestamp` in ms since the Unix epoch. */
export interface Envelope<D extends object = Record<string, unknown>> {
  type: string;
  id: string;
  timestamp: number;
  data: D;
}

/** Server events (docs/relay.md, "Events"), the types a client may subscribe to. */
export const EVENT_TYPES = ['StateSync', 'HealthSync', 'MetricsSync', 'TransactionReceived', 'BlockScanned'] as const;
/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];
/** Events that come from the silent-payment service and travel the mesh. */
export const PAYMENT_EVENT_TYPES = ['TransactionReceived', 'BlockScanned'] as const;
/** Periodic state messages a relay sends about itself. */
export const SYNC_TYPES = ['StateSync', 'HealthSync', 'MetricsSync'] as const;
/** One of {@link SYNC_TYPES}. */
export type SyncType = (typeof SYNC_TYPES)[number];

/** Client commands (docs/relay.md, "Client commands"; `subscribe` is ours). */
export const CLIENT_COMMANDS = ['ping', 'get_status', 'subscribe'] as const;
/** Relay-to-relay messages (ours; docs/relay.md, "Mesh protocol"). */
export const PEER_MESSAGES = ['hello', 'sync_request', 'sync_response'] as const;

/** Codes of the WebSocket `error` message (docs/relay.md, "WebSocket errors"). */
export const WS_ERROR_CODES = {
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  CONNECTION_ERROR: 'CONNECTION_ERROR',
} as const;
/** One of {@link WS_ERROR_CODES}. */
export type WsErrorCode = (typeof WS_ERROR_CODES)[keyof typeof WS_ERROR_CODES];

/** Longest message id accepted (ids are kept in the de-duplication set). */
export const MAX_ID_LENGTH = 128;

/** A message refused by {@link parseEnvelope}: what to tell the client. */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
  /** The id of the offending message when it had a usable one. */
  readonly requestId: string | undefined;
  readonly details: string;

  constructor(message: string, details: string, requestId?: string) {
    super(message);
    this.details = details;
    this.requestId = requestId;
  }
}

/** Builds an envelope with a fresh id (or `id`) and the current time. */
export function createEnvelope<D extends object>(type: string, data: D, id: string = randomUUID()): Envelope<D> {
  return { type, id, timestamp: Date.now(), data };
}

/** Builds the `error` message (docs/relay.md, "Events": `code`, `message`, `details`). */
export function createErrorMessage(
  code: WsErrorCode,
  message: string,
  details: string,
  id?: string,
): Envelope<{ code: string; message: string; details: string }> {
  return createEnvelope('error', { code, message, details }, id);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses one text frame into an envelope. `type` must be a non-empty string and `id` a string
 * of 1 to {@link MAX_ID_LENGTH} characters; `timestamp` (an integer) and `data` (an object) may
 * be omitted by clients. Throws InvalidMessageError otherwise; the type itself is checked by the caller.
 */
export function parseEnvelope(text: string): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidMessageError('message is not valid JSON', 'expected a JSON object {type, id, timestamp, data}');
  }
  if (!isPlainObject(value)) {
    throw new InvalidMessageError('message is not a JSON object', 'expected a JSON object {type, id, timestamp, data}');
  }
  const id = typeof value.id === 'string' && value.id.length > 0 && value.id.length <= MAX_ID_LENGTH ? value.id : undefined;
  if (value.type === undefined) throw new InvalidMessageError('missing field: type', 'every message needs a string "type"', id);
  if (typeof value.type !== 'string' || value.type === '') {
    throw new InvalidMessageError('invalid field: type', `"type" expected a non-empty string, got ${describe(value.type)}`, id);
  }
  if (value.id === undefined) throw new InvalidMessageError('missing field: id', 'every message needs a string "id"', id);
  if (id === undefined) {
    throw new InvalidMessageError(
      'invalid field: id',
      `"id" expected a string of 1 to ${MAX_ID_LENGTH} characters, got ${describe(value.id)}`,
    );
  }
  if (value.timestamp !== undefined && !Number.isSafeInteger(value.timestamp)) {
    throw new InvalidMessageError(
      'invalid field: timestamp',
      `"timestamp" expected an integer (ms since the Unix epoch), got ${describe(value.timestamp)}`,
      id,
    );
  }
  if (value.data !== undefined && !isPlainObject(value.data)) {
    throw new InvalidMessageError('invalid field: data', `"data" expected an object, got ${describe(value.data)}`, id);
  }
  return {
    type: value.type,
    id,
    timestamp: typeof value.timestamp === 'number' ? value.timestamp : Date.now(),
    data: (value.data as Record<string, unknown> | undefined) ?? {},
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return `string of length ${value.length}`;
  return typeof value;
}

type FieldKind = 'string' | 'number' | 'integer' | 'non-negative integer';

/** Fields of the payment events (docs/relay.md, "Events"). */
export const EVENT_FIELDS: Readonly<Record<(typeof PAYMENT_EVENT_TYPES)[number], Readonly<Record<string, FieldKind>>>> = {
  TransactionReceived: {
    txid: 'string',
    amount: 'number',
    address: 'string',
    block_height: 'non-negative integer',
    confirmations: 'non-negative integer',
  },
  BlockScanned: {
    block_height: 'non-negative integer',
    block_hash: 'string',
    transactions_count: 'non-negative integer',
    silent_payments_found: 'non-negative integer',
  },
};

function matches(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'non-negative integer':
      return Number.isSafeInteger(value) && (value as number) >= 0;
  }
}

/** True when `type` is a payment event (TransactionReceived or BlockScanned). */
export function isPaymentEventType(type: string): type is (typeof PAYMENT_EVENT_TYPES)[number] {
  return (PAYMENT_EVENT_TYPES as readonly string[]).includes(type);
}

/** True when `type` is one of the sync messages. */
export function isSyncType(type: string): type is SyncType {
  return (SYNC_TYPES as readonly string[]).includes(type);
}

/** True when `type` is one of the event types a client may subscribe to. */
export function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * Checks the `data` of a payment event against docs/relay.md, "Events" (every field present
 * with its type; extra fields are kept). Throws InvalidMessageError naming the field.
 */
export function assertPaymentEvent(envelope: Envelope): void {
  if (!isPaymentEventType(envelope.type))
    throw new InvalidMessageError(`not an event type: ${envelope.type}`, 'expected TransactionReceived or BlockScanned', envelope.id);
  for (const [field, kind] of Object.entries(EVENT_FIELDS[envelope.type])) {
    const value = envelope.data[field];
    if (value === undefined) {
      throw new InvalidMessageError(`missing field: data.${field}`, `${envelope.type} needs "${field}" (${kind})`, envelope.id);
    }
    if (!matches(kind, value)) {
      throw new InvalidMessageError(
        `invalid field: data.${field}`,
        `"${field}" expected ${kind === 'integer' || kind === 'non-negative integer' ? `a ${kind}` : `a ${kind}`}, got ${describe(value)}`,
        envelope.id,
      );
    }
  }
}

/** Reads the `types` of a `subscribe` command: an array of event types. Throws InvalidMessageError. */
export function parseSubscription(envelope: Envelope): EventType[] | undefined {
  const types = envelope.data.types;
  if (types === undefined) return undefined;
  if (!Array.isArray(types))
    throw new InvalidMessageError(
      'invalid field: data.types',
      `"types" expected an array of event types, got ${describe(types)}`,
      envelope.id,
    );
  const out: EventType[] = [];
  for (const t of types) {
    if (typeof t !== 'string' || !isEventType(t)) {
      throw new InvalidMessageError(
        'invalid field: data.types',
        `unknown event type ${JSON.stringify(t)}; expected any of ${EVENT_TYPES.join(', ')}`,
        envelope.id,
      );
    }
    if (!out.includes(t)) out.push(t);
  }
  return out;
}
