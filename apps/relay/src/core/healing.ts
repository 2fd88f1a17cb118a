import type { Connection } from '../connection';
import { healPeer } from '../replay';
import type { RelayState } from './state';

const confirmedKey = (peerId: string) => `peer-confirmed:${peerId}`;

/**
 * A peer's first link came (back) up: sends it every event this relay stored since the peer
 * last confirmed our data (kept across restarts in the log; for a peer never linked before,
 * since this relay started), so a partition or a restart loses nothing (docs/relay.md, "The mesh heals").
 */
export async function healLink(state: RelayState, conn: Connection): Promise<void> {
  const peerId = conn.peerId!;
  conn.healing = true;
  try {
    const known = state.peerConfirmed.get(peerId);
    const persisted = known === undefined ? await state.log.getMeta(confirmedKey(peerId)) : undefined;
    const from = known ?? (persisted !== undefined ? Number(persisted) : state.startedAt);
    state.peerConfirmed.set(peerId, from);
    conn.confirmedAt = from;
    const sent = await healPeer(conn, Math.max(0, from - state.timing.healOverlapMs), state.replay);
    state.logger.info({ peer: peerId, since: from, sent }, 'mesh link up: sent the peer the events stored since it last confirmed');
  } catch (err) {
    state.logger.warn({ peer: peerId, err: { message: (err as Error).message } }, 'mesh heal failed: the event log could not be read');
  } finally {
    conn.healing = false;
    conn.healEndedAt = Date.now();
  }
}

/** Records how far each linked peer confirmed our data (at each heartbeat, and at close). */
export function recordConfirmed(state: RelayState): void {
  for (const peerId of state.mesh.peerIds()) {
    const link = state.mesh.linkOf(peerId);
    if (link === undefined || link.confirmedAt <= (state.peerConfirmed.get(peerId) ?? 0)) continue;
    state.peerConfirmed.set(peerId, link.confirmedAt);
    state.log.setMeta(confirmedKey(peerId), String(link.confirmedAt)).catch(() => undefined);
  }
}
