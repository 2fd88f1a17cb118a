import { randomUUID } from 'node:crypto';
import { describeValue, expectedText, matchesKind, MAX_ID_LENGTH, splitFieldSpec, type FieldSpec } from './fields';
import { InvalidMessageError, type ErrorCode } from './errors';
import { MESSAGES } from './table';
import {
  isMessageType,
  isSubscriptionType,
  SUBSCRIPTION_TYPES,
  type DataOf,
  type Envelope,
  type Message,
  type MessageType,
  type SubscriptionType,
} from './types';

/** Builds an envelope with a fresh id (or `id`) and the current time. */
export function createEnvelope<D extends object>(type: string, data: D, id: string = randomUUID()): Envelope<D> {
  return { type, id, timestamp: Date.now(), data };
}

/** Builds a typed message of the table with a fresh id (or `id`) and the current time. */
export function createMessage<T extends MessageType>(type: T, data: DataOf<T>, id: string = randomUUID()): Message<T> {
  return { type, id, timestamp: Date.now(), data };
}

/** Builds the `error` message (`code`, `message`, `details`, plus `extra` fields). */
export function createErrorMessage(
  code: ErrorCode,
  message: string,
  details: string,
  id?: string,
  extra: Record<string, unknown> = {},
): Message<'error'> {
  return createMessage('error', { code, message, details, ...extra }, id);
}

/** The error message answering `err`. */
export function errorMessageOf(err: InvalidMessageError): Message<'error'> {
  return createErrorMessage(err.code, err.message, err.details, err.requestId, err.extra);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Parses one text frame into an envelope. `type` must be a non-empty string and `id` a string
 * of 1 to {@link MAX_ID_LENGTH} characters; `timestamp` (an integer, ms) and `data` (an object)
 * may be omitted (now and `{}`). The type itself is not checked here: see {@link assertMessage}.
 * Throws InvalidMessageError.
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
    throw new InvalidMessageError('invalid field: type', `"type" expected a non-empty string, got ${describeValue(value.type)}`, id);
  }
  if (value.id === undefined) throw new InvalidMessageError('missing field: id', 'every message needs a string "id"', id);
  if (id === undefined) {
    throw new InvalidMessageError(
      'invalid field: id',
      `"id" expected a string of 1 to ${MAX_ID_LENGTH} characters, got ${describeValue(value.id)}`,
    );
  }
  if (value.timestamp !== undefined && !Number.isSafeInteger(value.timestamp)) {
    throw new InvalidMessageError(
      'invalid field: timestamp',
      `"timestamp" expected an integer (ms since the Unix epoch), got ${describeValue(value.timestamp)}`,
      id,
    );
  }
  if (value.data !== undefined && !isPlainObject(value.data)) {
    throw new InvalidMessageError('invalid field: data', `"data" expected an object, got ${describeValue(value.data)}`, id);
  }
  return {
    type: value.type,
    id,
    timestamp: typeof value.timestamp === 'number' ? value.timestamp : Date.now(),
    data: value.data ?? {},
  };
}

/**
 * Checks an envelope's `data` against its row of the table: every listed field present (unless
 * optional) with its kind; fields not listed are kept. Returns the envelope typed by its type.
 * Throws InvalidMessageError naming the field, or for a type not in the table.
 */
export function assertMessage(envelope: Envelope): Message {
  const { type } = envelope;
  if (!isMessageType(type)) {
    throw new InvalidMessageError(
      `unknown message type: ${type.slice(0, 64)}`,
      `expected one of ${Object.keys(MESSAGES).join(', ')}`,
      envelope.id,
    );
  }
  const fields: Readonly<Record<string, FieldSpec>> = MESSAGES[type].fields;
  for (const [field, spec] of Object.entries(fields)) {
    const { kind, optional } = splitFieldSpec(spec);
    const value = envelope.data[field];
    if (value === undefined) {
      if (optional) continue;
      throw new InvalidMessageError(`missing field: data.${field}`, `${type} needs "${field}" (${kind})`, envelope.id);
    }
    if (!matchesKind(kind, value, isSubscriptionType)) {
      throw new InvalidMessageError(
        `invalid field: data.${field}`,
        `"${field}" expected ${expectedText(kind)}, got ${describeValue(value)}`,
        envelope.id,
      );
    }
  }
  return envelope as Message;
}

/** Where a replay starts: after the event with this id, or from this time (ms, inclusive). */
export type ReplayCursor = { id: string } | { time: number };

/** A parsed `subscribe` command. */
export interface Subscription {
  /** undefined: every type the connection may receive. */
  types: SubscriptionType[] | undefined;
  /** undefined: live events only. */
  since: ReplayCursor | undefined;
}

/**
 * Reads a `subscribe` command: `data.types` (an array of event types, de-duplicated) and
 * `data.since` (an event id, or a time in ms). Throws InvalidMessageError naming the field.
 */
export function parseSubscribe(envelope: Envelope): Subscription {
  const types = envelope.data.types;
  let out: SubscriptionType[] | undefined;
  if (types !== undefined) {
    if (!Array.isArray(types)) {
      throw new InvalidMessageError(
        'invalid field: data.types',
        `"types" expected an array of event types, got ${describeValue(types)}`,
        envelope.id,
      );
    }
    out = [];
    for (const t of types) {
      if (typeof t !== 'string' || !isSubscriptionType(t)) {
        throw new InvalidMessageError(
          'invalid field: data.types',
          `unknown event type ${JSON.stringify(t)?.slice(0, 64)}; expected any of ${SUBSCRIPTION_TYPES.join(', ')}`,
          envelope.id,
        );
      }
      if (!out.includes(t)) out.push(t);
    }
  }
  const since = envelope.data.since;
  let cursor: ReplayCursor | undefined;
  if (since !== undefined) {
    if (!matchesKind('event id or time', since, isSubscriptionType)) {
      throw new InvalidMessageError(
        'invalid field: data.since',
        `"since" expected ${expectedText('event id or time')}, got ${describeValue(since)}`,
        envelope.id,
      );
    }
    cursor = typeof since === 'string' ? { id: since } : { time: since as number };
  }
  return { types: out, since: cursor };
}
