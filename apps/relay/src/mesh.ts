import { WebSocket } from 'ws';
import { AppError } from '@repo/errors';
import { backoff, type Logger } from '@repo/service';
import { SYNC_TYPES, createMessage, type SyncRequestType, type SyncType } from '@repo/relay-protocol';
import type { RelayLimits, RelayTiming } from './config';
import type { Connection } from './connection';
import { peerTlsClientOptions, type PeerTlsOptions } from './peer-tls';
import type { RelayCounters } from './status';

/** Relay entry of `GET /relays` (docs/relay.md, "HTTP records"), plus what the peer last told us. */
export interface RelayEntry {
  relay_id: string | null;
  address: string;
  status: 'connected' | 'disconnected';
  connected_since: number | null;
  last_heartbeat: number | null;
  direction: 'outbound' | 'inbound';
  last_sync: Partial<Record<SyncType, Record<string, unknown>>>;
  /** Disconnected configured peers: why the last attempt failed. */
  last_error?: string;
  /** Configured peers: the URL dialled. */
  url?: string;
}

/** A configured peer URL and its reconnection state. */
interface Dialer {
  url: string;
  attempt: number;
  timer: NodeJS.Timeout | undefined;
  conn: Connection | undefined;
  /** The relay id learnt from the peer's hello (kept across reconnections). */
  peerId: string | undefined;
  /** The last failure, logged once per distinct reason. */
  lastError: string | undefined;
  lastSync: Partial<Record<SyncType, Record<string, unknown>>>;
}

interface PendingSync {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** What the mesh needs from the relay. */
export interface MeshOptions {
  relayId: string;
  version: string;
  meshToken: string;
  /** Which variable the mesh token comes from, named in the advice of a refused handshake. */
  meshTokenSource: string;
  peerTls: PeerTlsOptions;
  limits: RelayLimits;
  timing: RelayTiming;
  counters: RelayCounters;
  logger: Logger;
  isClosed: () => boolean;
  /** Wraps a dialled socket in a connection whose messages reach the relay's handlers. */
  openOutbound: (ws: WebSocket, address: string) => Connection;
  /** A peer's first link came up (`isNew`) or another link to it did. */
  onLinked: (conn: Connection, isNew: boolean) => void;
  /** A peer's last link went down. */
  onLost: (peerId: string, conn: Connection, reason: string) => void;
  /** A sync message a peer reported in answer to our `sync_request` (a `POST /sync`). */
  onSyncReport: (type: SyncType, data: Record<string, unknown>) => void;
}

/** The mesh: dialers of the configured peers, the registry of linked peers, sync correlation. */
export interface Mesh {
  addPeer(url: string): void;
  start(): void;
  /** Stops dialling; returns the dialled connections still open (the relay closes them). */
  stop(): Connection[];
  /** Records a peer's hello on `conn`. */
  register(conn: Connection, peerId: string): void;
  /** Forgets `conn` (closed); the peer is lost when it was its last link. */
  unregister(conn: Connection, reason: string): void;
  /** One open link per peer relay, preferring the one we dialled. */
  linkOf(peerId: string): Connection | undefined;
  /** Ids of the linked peers. */
  peerIds(): string[];
  readonly size: number;
  configuredCount(): number;
  linkedConfiguredCount(): number;
  relays(): RelayEntry[];
  /** Records a sync_response and settles the request it answers. */
  onSyncResponse(conn: Connection, requestId: string, messages: unknown): void;
  /**
   * Asks `target` (a peer's relay id, or `all` peers) for a sync. Throws AppError NOT_FOUND for
   * an unknown relay and CONNECTION_ERROR when a target is unreachable or does not answer in time.
   */
  requestSync(syncType: SyncRequestType, target: string, syncId: string): Promise<string[]>;
}

/** The advice logged when a peer refuses our handshake with `status`. */
export function refusalAdvice(status: number, meshTokenSource: string): string {
  if (status === 401 || status === 403) return `peer refused our mesh token: relays of one mesh share ${meshTokenSource}`;
  if (status === 503) return 'peer is at its connection limit or shutting down: it will be retried';
  if (status === 426 || status === 404) return 'the URL is not a relay WebSocket port: check RELAY_PEERS';
  return 'check RELAY_PEERS and the peer relay';
}

/** Creates the mesh. */
export function createMesh(options: MeshOptions): Mesh {
  const { logger, timing, limits, counters } = options;
  const peers = new Map<string, Set<Connection>>();
  const knownPeers = new Set<string>();
  const dialers: Dialer[] = [];
  const dialerOf = new Map<Connection, Dialer>();
  const pendingSyncs = new Map<string, PendingSync>();
  let started = false;

  function linkOf(peerId: string): Connection | undefined {
    const links = peers.get(peerId);
    if (links === undefined) return undefined;
    let best: Connection | undefined;
    for (const link of links) {
      if (!link.isOpen) continue;
      if (best === undefined || (link.outbound && !best.outbound)) best = link;
    }
    return best;
  }

  function scheduleDial(dialer: Dialer): void {
    if (options.isClosed()) return;
    const delay = backoff(dialer.attempt, { minMs: timing.reconnectMinMs, maxMs: timing.reconnectMaxMs, jitter: 'equal' });
    dialer.attempt++;
    dialer.timer = setTimeout(() => {
      dialer.timer = undefined;
      void dial(dialer);
    }, delay);
  }

  function dialFailed(dialer: Dialer, reason: string, advice: string | undefined, wasLinked: boolean): void {
    if (options.isClosed()) return;
    dialer.conn = undefined;
    if (!wasLinked) counters.peer_connect_failures++;
    // One warning per distinct reason, not one per retry.
    if (dialer.lastError !== reason) {
      logger.warn({ peer_url: dialer.url, reason, ...(advice ? { advice } : {}) }, 'cannot reach peer relay; retrying with backoff');
      dialer.lastError = reason;
    }
    scheduleDial(dialer);
  }

  async function dial(dialer: Dialer): Promise<void> {
    if (options.isClosed()) return;
    const url = new URL(dialer.url);
    let tlsOptions;
    try {
      tlsOptions = await peerTlsClientOptions(url, options.peerTls);
    } catch (err) {
      dialFailed(dialer, (err as Error).message, undefined, false);
      return;
    }
    if (options.isClosed()) return;
    const ws = new WebSocket(dialer.url, {
      ...tlsOptions,
      headers: { Authorization: `Bearer ${options.meshToken}` },
      handshakeTimeout: Math.max(1_000, timing.syncTimeoutMs),
      maxPayload: limits.maxMessageBytes,
      perMessageDeflate: false,
    });
    const conn = options.openOutbound(ws, `${url.hostname}:${url.port || (url.protocol === 'wss:' ? 443 : 80)}`);
    dialerOf.set(conn, dialer);
    dialer.conn = conn;
    let failure = 'connection closed';
    let advice: string | undefined;
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      advice = refusalAdvice(status, options.meshTokenSource);
      failure = `peer answered HTTP ${status}: ${advice}`;
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err) => {
      if (advice === undefined) failure = err.message;
    });
    let opened = false;
    ws.on('open', () => {
      opened = true;
      conn.sendMessage(createMessage('hello', { relay_id: options.relayId, version: options.version }));
    });
    ws.on('close', (code, reason) => {
      dialerOf.delete(conn);
      if (opened) failure = `closed with ${code}${reason.length > 0 ? ` (${reason.toString()})` : ''}`;
      const wasLinked = conn.peerId !== undefined;
      unregister(conn, failure);
      dialFailed(dialer, failure, advice, wasLinked);
    });
  }

  function register(conn: Connection, peerId: string): void {
    conn.peerId = peerId;
    knownPeers.add(peerId);
    let links = peers.get(peerId);
    const isNew = links === undefined;
    if (links === undefined) {
      links = new Set();
      peers.set(peerId, links);
    }
    links.add(conn);
    conn.lastHeartbeat = Date.now();
    const dialer = dialerOf.get(conn);
    if (dialer !== undefined) {
      dialer.attempt = 0;
      dialer.peerId = peerId;
      dialer.lastError = undefined;
    }
    if (isNew)
      logger.info({ peer: peerId, address: conn.address, direction: conn.outbound ? 'outbound' : 'inbound' }, 'peer relay connected');
    options.onLinked(conn, isNew);
  }

  function unregister(conn: Connection, reason: string): void {
    const peerId = conn.peerId;
    if (peerId === undefined) return;
    const links = peers.get(peerId);
    if (links === undefined) return;
    const dialer = [...dialers].find((d) => d.peerId === peerId);
    if (dialer !== undefined) dialer.lastSync = { ...dialer.lastSync, ...conn.lastSync };
    links.delete(conn);
    if (links.size > 0) return;
    peers.delete(peerId);
    logger.warn({ peer: peerId, address: conn.address, reason }, 'peer relay unreachable');
    options.onLost(peerId, conn, reason);
  }

  function syncWith(peerId: string, syncType: SyncRequestType, requestId: string): Promise<void> {
    const link = linkOf(peerId);
    if (link === undefined) return Promise.reject(new Error(`relay ${peerId} is unreachable`));
    return new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        const pending = pendingSyncs.get(requestId);
        if (pending === undefined) return;
        clearTimeout(pending.timer);
        pendingSyncs.delete(requestId);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(
        () => done(new Error(`relay ${peerId} did not answer within ${timing.syncTimeoutMs} ms`)),
        timing.syncTimeoutMs,
      );
      pendingSyncs.set(requestId, { resolve: () => done(), reject: done, timer });
      if (!link.sendMessage(createMessage('sync_request', { sync_type: syncType }, requestId))) {
        done(new Error(`relay ${peerId} is unreachable`));
      }
    });
  }

  const isLinked = (d: Dialer) => d.peerId !== undefined && peers.has(d.peerId);

  return {
    addPeer(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new TypeError(`"url" expected a ws:// or wss:// URL, got ${JSON.stringify(url)}`);
      }
      if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
        throw new TypeError(`"url" expected a ws:// or wss:// URL, got ${JSON.stringify(url)}`);
      const dialer: Dialer = { url, attempt: 0, timer: undefined, conn: undefined, peerId: undefined, lastError: undefined, lastSync: {} };
      dialers.push(dialer);
      if (started && !options.isClosed()) void dial(dialer);
    },
    start() {
      started = true;
      for (const dialer of dialers) void dial(dialer);
    },
    stop() {
      for (const dialer of dialers) clearTimeout(dialer.timer);
      for (const [id, pending] of pendingSyncs) {
        clearTimeout(pending.timer);
        pending.reject(new Error('relay is shutting down'));
        pendingSyncs.delete(id);
      }
      return dialers.flatMap((d) => (d.conn !== undefined ? [d.conn] : []));
    },
    register,
    unregister,
    linkOf,
    peerIds: () => [...peers.keys()],
    get size() {
      return peers.size;
    },
    configuredCount: () => dialers.length,
    linkedConfiguredCount: () => dialers.filter(isLinked).length,
    relays() {
      const entries: RelayEntry[] = [];
      for (const peerId of peers.keys()) {
        const link = linkOf(peerId) ?? [...(peers.get(peerId) ?? [])][0];
        if (link === undefined) continue;
        let lastHeartbeat = 0;
        const lastSync: RelayEntry['last_sync'] = {};
        for (const l of peers.get(peerId) ?? []) {
          lastHeartbeat = Math.max(lastHeartbeat, l.lastHeartbeat);
          Object.assign(lastSync, l.lastSync);
        }
        const dialer = dialers.find((d) => d.peerId === peerId);
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
      // Configured peers that are not linked now: listed so an operator sees why.
      for (const dialer of dialers) {
        if (isLinked(dialer)) continue;
        const url = new URL(dialer.url);
        entries.push({
          relay_id: dialer.peerId ?? null,
          address: `${url.hostname}:${url.port || (url.protocol === 'wss:' ? 443 : 80)}`,
          status: 'disconnected',
          connected_since: null,
          last_heartbeat: null,
          direction: 'outbound',
          last_sync: dialer.lastSync,
          last_error: dialer.lastError ?? (started ? 'connecting' : 'not started'),
          url: dialer.url,
        });
      }
      return entries;
    },
    onSyncResponse(conn, requestId, messages) {
      const pending = pendingSyncs.get(requestId);
      if (Array.isArray(messages)) {
        for (const m of messages as unknown[]) {
          if (typeof m !== 'object' || m === null) continue;
          const { type, data } = m as { type?: unknown; data?: unknown };
          if (typeof type !== 'string' || !(SYNC_TYPES as readonly string[]).includes(type)) continue;
          if (typeof data !== 'object' || data === null || Array.isArray(data)) continue;
          conn.lastSync[type as SyncType] = data as Record<string, unknown>;
          if (pending !== undefined) options.onSyncReport(type as SyncType, data as Record<string, unknown>);
        }
      }
      counters.last_sync_timestamp = Date.now();
      if (pending !== undefined) pending.resolve();
    },
    async requestSync(syncType, target, syncId) {
      let targets: string[];
      if (target === 'all') {
        targets = [...peers.keys()];
        if (targets.length === 0) {
          counters.sync_errors++;
          throw new AppError('CONNECTION_ERROR', { message: 'no peer relay is connected', details: `configured peers: ${dialers.length}` });
        }
      } else if (peers.has(target)) {
        targets = [target];
      } else if (knownPeers.has(target) || dialers.some((d) => d.peerId === target)) {
        counters.sync_errors++;
        throw new AppError('CONNECTION_ERROR', {
          message: `relay ${target} is unreachable`,
          details: 'the peer was connected earlier and is now disconnected',
        });
      } else {
        throw new AppError('NOT_FOUND', {
          message: `unknown relay: ${target}`,
          details: 'target_relay must be a connected peer relay_id (see GET /relays), this relay\'s id, or "all"',
        });
      }
      const results = await Promise.allSettled(targets.map((peerId, i) => syncWith(peerId, syncType, `${syncId}.${i}`)));
      const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${targets[i]}: ${(r.reason as Error).message}`] : []));
      if (failed.length > 0) {
        counters.sync_errors += failed.length;
        throw new AppError('CONNECTION_ERROR', {
          message: `sync failed with ${failed.length} of ${targets.length} relay(s)`,
          details: failed.join('; '),
        });
      }
      return targets;
    },
  };
}
