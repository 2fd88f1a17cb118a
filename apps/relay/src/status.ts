import type { DataOf, SyncType } from '@repo/relay-protocol';
import type { SystemStats } from './system-stats';

/** Counters behind `/metrics`, `/status` and MetricsSync. */
export interface RelayCounters {
  messages_sent: number;
  messages_received: number;
  sync_errors: number;
  last_sync_timestamp: number;
  events_published: number;
  /** Events stored in the log by this relay (published here or forwarded by a peer). */
  events_stored: number;
  duplicates_dropped: number;
  slow_consumers_dropped: number;
  upgrades_refused: number;
  peer_connect_failures: number;
  /** Events sent to clients from the log (`subscribe` with `since`). */
  events_replayed: number;
  /** Events sent to peers from the log after a link came back. */
  events_healed: number;
  /** Messages refused before parsing: too large for a client, over the rate, nested too deep. */
  messages_rejected: number;
}

/** Fresh counters, all zero. */
export function createCounters(): RelayCounters {
  return {
    messages_sent: 0,
    messages_received: 0,
    sync_errors: 0,
    last_sync_timestamp: 0,
    events_published: 0,
    events_stored: 0,
    duplicates_dropped: 0,
    slow_consumers_dropped: 0,
    upgrades_refused: 0,
    peer_connect_failures: 0,
    events_replayed: 0,
    events_healed: 0,
    messages_rejected: 0,
  };
}

/** What the records are built from, read at one instant. */
export interface RelaySnapshot {
  relayId: string;
  version: string;
  /** Seconds since start. */
  uptime: number;
  connectedRelays: number;
  connectedClients: number;
  lastBlockHeight: number;
  /** Peers configured by URL, and how many of them are linked now. */
  configuredPeers: number;
  linkedConfiguredPeers: number;
  counters: Readonly<RelayCounters>;
}

/**
 * The `data` of this relay's own sync message of `type` (docs/relay.md, "Events").
 * `stats` is sampled by the caller for HealthSync only.
 */
export function syncData<T extends SyncType>(type: T, s: RelaySnapshot, stats?: SystemStats): DataOf<T> {
  return syncDataOf(type, s, stats) as DataOf<T>;
}

function syncDataOf(type: SyncType, s: RelaySnapshot, stats?: SystemStats): DataOf<SyncType> {
  switch (type) {
    case 'StateSync':
      return {
        relay_id: s.relayId,
        state: 'running',
        version: s.version,
        uptime: s.uptime,
        connected_relays: s.connectedRelays,
        last_block_height: s.lastBlockHeight,
      };
    case 'HealthSync':
      return {
        relay_id: s.relayId,
        status: 'healthy',
        uptime: s.uptime,
        ...(stats ?? { cpu_usage: 0, memory_usage: 0 }),
      };
    case 'MetricsSync':
      return {
        relay_id: s.relayId,
        messages_sent: s.counters.messages_sent,
        messages_received: s.counters.messages_received,
        sync_errors: s.counters.sync_errors,
        connected_relays: s.connectedRelays,
      };
  }
}

/** `GET /health`. */
export function healthRecord(s: RelaySnapshot) {
  return { status: 'healthy', relay_id: s.relayId, uptime: s.uptime, version: s.version, connected_relays: s.connectedRelays };
}

/** The `status` reply to `get_status`. */
export function statusReply(s: RelaySnapshot): DataOf<'status'> {
  return {
    relay_id: s.relayId,
    status: 'running',
    uptime: s.uptime,
    connected_relays: s.connectedRelays,
    last_block_height: s.lastBlockHeight,
  };
}

/** `GET /status`: the status record with `sync_metrics`. */
export function statusRecord(s: RelaySnapshot): Record<string, unknown> {
  return {
    relay_id: s.relayId,
    status: 'running',
    uptime: s.uptime,
    version: s.version,
    connected_relays: s.connectedRelays,
    last_block_height: s.lastBlockHeight,
    sync_metrics: {
      messages_sent: s.counters.messages_sent,
      messages_received: s.counters.messages_received,
      sync_errors: s.counters.sync_errors,
    },
    connected_clients: s.connectedClients,
  };
}

/** `GET /metrics`: the metrics record plus our counters. */
export function metricsRecord(s: RelaySnapshot): Record<string, unknown> {
  const c = s.counters;
  return {
    messages_sent: c.messages_sent,
    messages_received: c.messages_received,
    messages_rejected: c.messages_rejected,
    sync_errors: c.sync_errors,
    last_sync_timestamp: c.last_sync_timestamp,
    connected_relays: s.connectedRelays,
    // Share of the configured peers we are linked to (1 with no configured peers).
    mesh_health: s.configuredPeers === 0 ? 1 : Math.round((s.linkedConfiguredPeers / s.configuredPeers) * 1000) / 1000,
    connected_clients: s.connectedClients,
    events_published: c.events_published,
    events_stored: c.events_stored,
    events_replayed: c.events_replayed,
    events_healed: c.events_healed,
    duplicates_dropped: c.duplicates_dropped,
    slow_consumers_dropped: c.slow_consumers_dropped,
    upgrades_refused: c.upgrades_refused,
    peer_connect_failures: c.peer_connect_failures,
  };
}
