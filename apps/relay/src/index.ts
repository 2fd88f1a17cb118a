export { loadConfig, DEFAULT_LIMITS, DEFAULT_TIMING, type RelayConfig, type RelayLimits, type RelayTiming } from './config';
export { createApp, RELAY_VERSION, type AppDeps, type RelayApp } from './app';
export { createRelay, type Relay, type RelayEntry, type RelayOptions, type RelayCounters } from './relay';
export * from '@repo/relay-protocol';
export { createSeenIds, type SeenIds, type SeenIdsOptions } from './seen-ids';
export { backoffDelay } from './backoff';
