import { SYNC_TYPES, createMessage, type SyncType } from '@repo/relay-protocol';
import { recordConfirmed } from './healing';
import { ownSync, type RelayState } from './state';

/** How often the log's retention runs (ms). */
const RETENTION_INTERVAL_MS = 60_000;
/** MetricsSync "on change" coalesces the changes of this long into one message (ms). */
const METRICS_COALESCE_MS = 50;

/** Sends this relay's own sync message of `type` to its clients and its peers. */
export function pushSync(state: RelayState, type: SyncType): void {
  state.fanOut.send(createMessage(type, ownSync(state, type)), { type, toPeers: true });
  if (state.mesh.size > 0) state.counters.last_sync_timestamp = Date.now();
}

/** MetricsSync "on change": coalesces bursts of changes into one message. */
export function metricsChanged(state: RelayState): void {
  if (state.closed || state.timers.metrics !== undefined) return;
  state.timers.metrics = setTimeout(() => {
    state.timers.metrics = undefined;
    pushSync(state, 'MetricsSync');
  }, METRICS_COALESCE_MS);
}

/** RFC 6455 5.5.2: pings every connection; one that did not answer the previous ping is gone. */
export function heartbeat(state: RelayState): void {
  recordConfirmed(state);
  const now = Date.now();
  for (const conn of state.connections) {
    if (!conn.alive) {
      state.logger.info({ address: conn.address, peer: conn.peerId }, 'heartbeat: no pong, terminating connection');
      conn.ws.terminate();
      continue;
    }
    conn.alive = false;
    conn.pingSentAt = now;
    try {
      conn.ws.ping();
    } catch {
      conn.ws.terminate();
    }
  }
}

/** Starts the heartbeat, the periodic sync messages and the log's retention. */
export function startTimers(state: RelayState): void {
  const { timers, timing, log, logger } = state;
  timers.heartbeat = setInterval(() => heartbeat(state), timing.heartbeatIntervalMs);
  timers.sync = setInterval(() => {
    for (const type of SYNC_TYPES) pushSync(state, type);
  }, timing.syncIntervalMs);
  const trim = () =>
    log.trim().then(
      (removed) => removed > 0 && logger.info({ removed }, 'event log: retention removed old events'),
      (err: Error) => logger.warn({ err: { message: err.message } }, 'event log: retention failed'),
    );
  void trim();
  timers.retention = setInterval(() => void trim(), RETENTION_INTERVAL_MS);
}

/** Clears every timer. */
export function stopTimers(state: RelayState): void {
  const { timers } = state;
  clearInterval(timers.heartbeat);
  clearInterval(timers.sync);
  clearTimeout(timers.metrics);
  clearInterval(timers.retention);
}
