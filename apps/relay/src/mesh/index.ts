import { dial } from './dial';
import { isLinked, linkOf, register, relayEntries, unregister } from './registry';
import { onSyncResponse, requestSync } from './sync';
import type { Dialer, Mesh, MeshOptions, MeshState } from './types';

export { refusalAdvice } from './dial';
export type { Mesh, MeshOptions, RelayEntry } from './types';

/** Checks a peer URL: a TypeError unless `ws://` or `wss://`. */
function peerUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`"url" expected a ws:// or wss:// URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
    throw new TypeError(`"url" expected a ws:// or wss:// URL, got ${JSON.stringify(url)}`);
  return url;
}

/**
 * Creates the mesh around one state object (`types.ts`, MeshState): dialers of the configured
 * peers with backoff (`dial.ts`), the registry of linked peers and `/relays` (`registry.ts`), and
 * `sync_request` correlation (`sync.ts`).
 */
export function createMesh(options: MeshOptions): Mesh {
  const mesh: MeshState = {
    options,
    peers: new Map(),
    knownPeers: new Set(),
    dialers: [],
    dialerOf: new Map(),
    pendingSyncs: new Map(),
    started: false,
  };
  return {
    addPeer(url) {
      const dialer: Dialer = {
        url: peerUrl(url),
        attempt: 0,
        timer: undefined,
        conn: undefined,
        peerId: undefined,
        lastError: undefined,
        lastSync: {},
      };
      mesh.dialers.push(dialer);
      if (mesh.started && !options.isClosed()) void dial(mesh, dialer);
    },
    start() {
      mesh.started = true;
      for (const dialer of mesh.dialers) void dial(mesh, dialer);
    },
    stop() {
      for (const dialer of mesh.dialers) clearTimeout(dialer.timer);
      for (const [id, pending] of mesh.pendingSyncs) {
        clearTimeout(pending.timer);
        pending.reject(new Error('relay is shutting down'));
        mesh.pendingSyncs.delete(id);
      }
      return mesh.dialers.flatMap((d) => (d.conn !== undefined ? [d.conn] : []));
    },
    register: (conn, peerId) => register(mesh, conn, peerId),
    unregister: (conn, reason) => unregister(mesh, conn, reason),
    linkOf: (peerId) => linkOf(mesh, peerId),
    peerIds: () => [...mesh.peers.keys()],
    get size() {
      return mesh.peers.size;
    },
    configuredCount: () => mesh.dialers.length,
    linkedConfiguredCount: () => mesh.dialers.filter((d) => isLinked(mesh, d)).length,
    relays: () => relayEntries(mesh),
    onSyncResponse: (conn, requestId, messages) => onSyncResponse(mesh, conn, requestId, messages),
    requestSync: (syncType, target, syncId) => requestSync(mesh, syncType, target, syncId),
  };
}
