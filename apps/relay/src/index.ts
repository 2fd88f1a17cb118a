export { loadConfig, DEFAULT_LIMITS, DEFAULT_TIMING, type RelayConfig, type RelayLimits, type RelayTiming } from './config';
export { createApp, RELAY_VERSION, type AppDeps, type RelayApp } from './app';
export {
  createRelay,
  SYNC_REQUEST_TYPES,
  type Relay,
  type RelayEntry,
  type RelayOptions,
  type RelayCounters,
  type SyncRequestType,
} from './relay';
export {
  EVENT_TYPES,
  EVENT_FIELDS,
  PAYMENT_EVENT_TYPES,
  SYNC_TYPES,
  WS_ERROR_CODES,
  createEnvelope,
  parseEnvelope,
  InvalidMessageError,
  type Envelope,
  type EventType,
  type SyncType,
} from './messages';
export { createSeenIds, type SeenIds, type SeenIdsOptions } from './seen-ids';
export { backoffDelay } from './backoff';
