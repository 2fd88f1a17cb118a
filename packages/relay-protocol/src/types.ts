import type { FieldKind, FieldSpec } from './fields';
import { MESSAGES, type MessageRole } from './table';

type Table = typeof MESSAGES;
/** Every message type of the table. */
export type MessageType = keyof Table;
/** Message types of one role. */
export type TypesOfRole<R extends MessageRole> = { [T in MessageType]: Table[T]['role'] extends R ? T : never }[MessageType];
/** Periodic state messages a relay sends about itself. */
export type SyncType = TypesOfRole<'sync'>;
/** Events of the silent-payment service: stored, replayed, forwarded over the mesh. */
export type EventType = TypesOfRole<'event'>;
/** What a client may subscribe to: sync messages and events. */
export type SubscriptionType = SyncType | EventType;
/** Client commands. */
export type CommandType = TypesOfRole<'command'>;
/** Replies of the relay to one connection. */
export type ReplyType = TypesOfRole<'reply'>;
/** Relay-to-relay messages. */
export type PeerMessageType = TypesOfRole<'peer'>;

/** The TypeScript type of each field kind. */
export interface FieldKindTypes {
  string: string;
  number: number;
  integer: number;
  'non-negative integer': number;
  'non-negative integer or null': number | null;
  boolean: boolean;
  object: Record<string, unknown>;
  array: unknown[];
  'event types': SubscriptionType[];
  'event types or all': SubscriptionType[] | 'all';
  'event id or time': string | number;
}

type KindOf<S> = S extends `${infer K}?` ? K : S;
type TypeOfSpec<S> = KindOf<S> extends FieldKind ? FieldKindTypes[KindOf<S>] : never;
type Simplify<O> = { [K in keyof O]: O[K] } & {};
type FieldsToData<F extends Readonly<Record<string, FieldSpec>>> = Simplify<
  { -readonly [K in keyof F as F[K] extends `${string}?` ? never : K]: TypeOfSpec<F[K]> } & {
    -readonly [K in keyof F as F[K] extends `${string}?` ? K : never]?: TypeOfSpec<F[K]>;
  }
>;

/** The `data` of a message of type `T`, derived from its row of the table. */
export type DataOf<T extends MessageType> = FieldsToData<Table[T]['fields']>;

/**
 * The WebSocket envelope `{type, id, timestamp, data}`; `timestamp` in ms since the Unix epoch
 * (docs/relay.md, "WebSocket"). `D` is the data; see {@link Message} for an envelope typed by its type.
 */
export interface Envelope<D extends object = Record<string, unknown>> {
  type: string;
  id: string;
  timestamp: number;
  data: D;
}

/** An envelope of type `T` with the data of its row. */
export type Message<T extends MessageType = MessageType> = {
  [K in T]: { type: K; id: string; timestamp: number; data: DataOf<K> };
}[T];

/** The data of every event type, by type (for publishers). */
export type EventDataByType = { [T in EventType]: DataOf<T> };

/** Types by role (values). */
function typesOfRole<R extends MessageRole>(role: R): TypesOfRole<R>[] {
  return (Object.keys(MESSAGES) as MessageType[]).filter((t) => MESSAGES[t].role === role) as TypesOfRole<R>[];
}

/** StateSync, HealthSync, MetricsSync. */
export const SYNC_TYPES: readonly SyncType[] = typesOfRole('sync');
/** TransactionReceived, BlockScanned, PaymentReorged, PaymentSpent, InvoicePaid. */
export const EVENT_TYPES: readonly EventType[] = typesOfRole('event');
/** The sync messages and the events: what `subscribe` accepts in `data.types`. */
export const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = [...SYNC_TYPES, ...EVENT_TYPES];
/** Events that need the `payments` scope. */
export const PAYMENT_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => MESSAGES[t].scope === 'payments');
/** ping, get_status, subscribe. */
export const COMMAND_TYPES: readonly CommandType[] = typesOfRole('command');
/** hello, sync_request, sync_response. */
export const PEER_MESSAGE_TYPES: readonly PeerMessageType[] = typesOfRole('peer');
/** `sync_type` values of `sync_request` and `POST /sync`: a sync message or `all` of them. */
export const SYNC_REQUEST_TYPES: readonly (SyncType | 'all')[] = [...SYNC_TYPES, 'all'];
/** One of {@link SYNC_REQUEST_TYPES}. */
export type SyncRequestType = SyncType | 'all';

/** True when `type` is a row of the table. */
export function isMessageType(type: string): type is MessageType {
  return Object.prototype.hasOwnProperty.call(MESSAGES, type);
}
/** True for StateSync, HealthSync and MetricsSync. */
export function isSyncType(type: string): type is SyncType {
  return isMessageType(type) && MESSAGES[type].role === 'sync';
}
/** True for the events of the silent-payment service. */
export function isEventType(type: string): type is EventType {
  return isMessageType(type) && MESSAGES[type].role === 'event';
}
/** True for what a client may subscribe to. */
export function isSubscriptionType(type: string): type is SubscriptionType {
  return isSyncType(type) || isEventType(type);
}
/** True for the events that need the `payments` scope. */
export function isPaymentEventType(type: string): type is EventType {
  return isEventType(type) && MESSAGES[type].scope === 'payments';
}
