import { AppError } from '@repo/errors';
import { SYNC_TYPES, createMessage, type SyncRequestType, type SyncType } from '@repo/relay-protocol';
import type { Connection } from '../connection';
import { linkOf } from './registry';
import type { MeshState } from './types';

/** Sends `sync_request` to a peer and resolves on its `sync_response` (rejects after RELAY_SYNC_TIMEOUT_MS). */
function syncWith(mesh: MeshState, peerId: string, syncType: SyncRequestType, requestId: string): Promise<void> {
  const link = linkOf(mesh, peerId);
  if (link === undefined) return Promise.reject(new Error(`relay ${peerId} is unreachable`));
  const { syncTimeoutMs } = mesh.options.timing;
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      const pending = mesh.pendingSyncs.get(requestId);
      if (pending === undefined) return;
      clearTimeout(pending.timer);
      mesh.pendingSyncs.delete(requestId);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => done(new Error(`relay ${peerId} did not answer within ${syncTimeoutMs} ms`)), syncTimeoutMs);
    mesh.pendingSyncs.set(requestId, { resolve: () => done(), reject: done, timer });
    if (!link.sendMessage(createMessage('sync_request', { sync_type: syncType }, requestId))) {
      done(new Error(`relay ${peerId} is unreachable`));
    }
  });
}

/** Records a sync_response and settles the request it answers. */
export function onSyncResponse(mesh: MeshState, conn: Connection, requestId: string, messages: unknown): void {
  const pending = mesh.pendingSyncs.get(requestId);
  if (Array.isArray(messages)) {
    for (const m of messages as unknown[]) {
      if (typeof m !== 'object' || m === null) continue;
      const { type, data } = m as { type?: unknown; data?: unknown };
      if (typeof type !== 'string' || !(SYNC_TYPES as readonly string[]).includes(type)) continue;
      if (typeof data !== 'object' || data === null || Array.isArray(data)) continue;
      conn.lastSync[type as SyncType] = data as Record<string, unknown>;
      if (pending !== undefined) mesh.options.onSyncReport(type as SyncType, data as Record<string, unknown>);
    }
  }
  mesh.options.counters.last_sync_timestamp = Date.now();
  if (pending !== undefined) pending.resolve();
}

/** The peers a `POST /sync` aims at, or the AppError that answers it. */
function syncTargets(mesh: MeshState, target: string): string[] {
  const { counters } = mesh.options;
  if (target === 'all') {
    const targets = [...mesh.peers.keys()];
    if (targets.length === 0) {
      counters.sync_errors++;
      throw new AppError('CONNECTION_ERROR', {
        message: 'no peer relay is connected',
        details: `configured peers: ${mesh.dialers.length}`,
      });
    }
    return targets;
  }
  if (mesh.peers.has(target)) return [target];
  if (mesh.knownPeers.has(target) || mesh.dialers.some((d) => d.peerId === target)) {
    counters.sync_errors++;
    throw new AppError('CONNECTION_ERROR', {
      message: `relay ${target} is unreachable`,
      details: 'the peer was connected earlier and is now disconnected',
    });
  }
  throw new AppError('NOT_FOUND', {
    message: `unknown relay: ${target}`,
    details: 'target_relay must be a connected peer relay_id (see GET /relays), this relay\'s id, or "all"',
  });
}

/**
 * Asks `target` (a peer's relay id, or `all` peers) for a sync. Throws AppError NOT_FOUND for an
 * unknown relay and CONNECTION_ERROR when a target is unreachable or does not answer in time.
 */
export async function requestSync(mesh: MeshState, syncType: SyncRequestType, target: string, syncId: string): Promise<string[]> {
  const targets = syncTargets(mesh, target);
  const results = await Promise.allSettled(targets.map((peerId, i) => syncWith(mesh, peerId, syncType, `${syncId}.${i}`)));
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${targets[i]}: ${(r.reason as Error).message}`] : []));
  if (failed.length > 0) {
    mesh.options.counters.sync_errors += failed.length;
    throw new AppError('CONNECTION_ERROR', {
      message: `sync failed with ${failed.length} of ${targets.length} relay(s)`,
      details: failed.join('; '),
    });
  }
  return targets;
}
