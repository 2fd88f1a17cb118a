import type { WebSocketServer } from 'ws';
import type { Logger } from '@repo/service';
import type { SyncType } from '@repo/relay-protocol';
import type { RelayLimits, RelayTiming } from '../config';
import type { Connection } from '../connection';
import type { EventLog } from '../event-log';
import type { FanOut } from '../fan-out';
import type { Mesh } from '../mesh';
import type { MessageGuard } from '../message-guard';
import type { ReplayDeps } from '../replay';
import type { SeenIds } from '../seen-ids';
import { syncData, type RelayCounters, type RelaySnapshot } from '../status';
import type { StatsSampler } from '../system-stats';

/** The relay's timers (started by `start()`, cleared by `close()`). */
export interface RelayTimers {
  heartbeat?: NodeJS.Timeout;
  sync?: NodeJS.Timeout;
  /** MetricsSync "on change", coalesced. */
  metrics?: NodeJS.Timeout;
  retention?: NodeJS.Timeout;
}

/**
 * Everything a relay holds, in one object the modules of `core/` receive: no module keeps relay
 * state in a closure of its own. Built by `createRelay`, which wires the parts to it.
 */
export interface RelayState {
  readonly relayId: string;
  readonly version: string;
  readonly startedAt: number;
  readonly limits: RelayLimits;
  readonly timing: RelayTiming;
  readonly logger: Logger;
  readonly counters: RelayCounters;
  /** Accepted connections and open dialled ones. */
  readonly connections: Set<Connection>;
  readonly seen: SeenIds;
  readonly log: EventLog;
  readonly sampler: StatsSampler;
  /**
   * The handshakes: publishers and peers may send frames of MAX_MESSAGE_BYTES, clients of
   * MAX_CLIENT_MESSAGE_BYTES; a frame announcing more is refused from its header (close 1009),
   * never buffered.
   */
  readonly wss: { full: WebSocketServer; client: WebSocketServer };
  readonly guard: MessageGuard;
  readonly replay: ReplayDeps;
  /** Per peer: the time up to which it confirmed our data (see Connection.confirmedAt). */
  readonly peerConfirmed: Map<string, number>;
  readonly timers: RelayTimers;
  mesh: Mesh;
  fanOut: FanOut;
  lastBlockHeight: number;
  closed: boolean;
  /** Deliveries in arrival order (appends are pipelined; each is delivered once stored, in turn). */
  deliveries: Promise<void>;
}

/** What the records are built from, read now. */
export function snapshot(state: RelayState): RelaySnapshot {
  let clients = 0;
  for (const c of state.connections) if (c.isClient) clients++;
  return {
    relayId: state.relayId,
    version: state.version,
    uptime: Math.floor((Date.now() - state.startedAt) / 1000),
    connectedRelays: state.mesh.size,
    connectedClients: clients,
    lastBlockHeight: state.lastBlockHeight,
    configuredPeers: state.mesh.configuredCount(),
    linkedConfiguredPeers: state.mesh.linkedConfiguredCount(),
    counters: state.counters,
  };
}

/** The data of this relay's own sync message of `type`. */
export function ownSync<T extends SyncType>(state: RelayState, type: T) {
  return syncData(type, snapshot(state), type === 'HealthSync' ? state.sampler.sample() : undefined);
}
