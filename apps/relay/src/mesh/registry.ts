import type { Connection } from '../connection';
import type { MeshState, RelayEntry } from './types';
import { hostPort } from './types';

/** One open link per peer relay, preferring the one we dialled. */
export function linkOf(mesh: MeshState, peerId: string): Connection | undefined {
  const links = mesh.peers.get(peerId);
  if (links === undefined) return undefined;
  let best: Connection | undefined;
  for (const link of links) {
    if (!link.isOpen) continue;
    if (best === undefined || (link.outbound && !best.outbound)) best = link;
  }
  return best;
}

/** Records a peer's hello on `conn`: a new peer, or another link to a known one. */
export function register(mesh: MeshState, conn: Connection, peerId: string): void {
  conn.peerId = peerId;
  mesh.knownPeers.add(peerId);
  let links = mesh.peers.get(peerId);
  const isNew = links === undefined;
  if (links === undefined) {
    links = new Set();
    mesh.peers.set(peerId, links);
  }
  links.add(conn);
  conn.lastHeartbeat = Date.now();
  const dialer = mesh.dialerOf.get(conn);
  if (dialer !== undefined) {
    dialer.attempt = 0;
    dialer.peerId = peerId;
    dialer.lastError = undefined;
  }
  if (isNew) {
    const direction = conn.outbound ? 'outbound' : 'inbound';
    mesh.options.logger.info({ peer: peerId, address: conn.address, direction }, 'peer relay connected');
  }
  mesh.options.onLinked(conn, isNew);
}

/** Forgets `conn` (closed); the peer is lost when it was its last link. */
export function unregister(mesh: MeshState, conn: Connection, reason: string): void {
  const peerId = conn.peerId;
  if (peerId === undefined) return;
  const links = mesh.peers.get(peerId);
  if (links === undefined) return;
  const dialer = mesh.dialers.find((d) => d.peerId === peerId);
  if (dialer !== undefined) dialer.lastSync = { ...dialer.lastSync, ...conn.lastSync };
  links.delete(conn);
  if (links.size > 0) return;
  mesh.peers.delete(peerId);
  mesh.options.logger.warn({ peer: peerId, address: conn.address, reason }, 'peer relay unreachable');
  mesh.options.onLost(peerId, conn, reason);
}

/** A configured peer whose relay is linked now. */
export function isLinked(mesh: MeshState, dialer: { peerId: string | undefined }): boolean {
  return dialer.peerId !== undefined && mesh.peers.has(dialer.peerId);
}

/** `GET /relays`: linked peers, then configured peers not linked now (so an operator sees why). */
export function relayEntries(mesh: MeshState): RelayEntry[] {
  const entries: RelayEntry[] = [];
  for (const [peerId, links] of mesh.peers) {
    const link = linkOf(mesh, peerId) ?? [...links][0];
    if (link === undefined) continue;
    let lastHeartbeat = 0;
    const lastSync: RelayEntry['last_sync'] = {};
    for (const l of links) {
      lastHeartbeat = Math.max(lastHeartbeat, l.lastHeartbeat);
      Object.assign(lastSync, l.lastSync);
    }
    const dialer = mesh.dialers.find((d) => d.peerId === peerId);
    entries.push({
      relay_id: peerId,
      address: link.address,
      status: 'connected',
      connected_since: link.connectedSince,
      last_heartbeat: lastHeartbeat,
      direction: link.outbound ? 'outbound' : 'inbound',
      last_sync: lastSync,
      ...(dialer ? { url: dialer.url } : {}),
    });
  }
  for (const dialer of mesh.dialers) {
    if (isLinked(mesh, dialer)) continue;
    entries.push({
      relay_id: dialer.peerId ?? null,
      address: hostPort(new URL(dialer.url)),
      status: 'disconnected',
      connected_since: null,
      last_heartbeat: null,
      direction: 'outbound',
      last_sync: dialer.lastSync,
      last_error: dialer.lastError ?? (mesh.started ? 'connecting' : 'not started'),
      url: dialer.url,
    });
  }
  return entries;
}
