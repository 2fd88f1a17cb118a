import type { WebSocket } from 'ws';
import type { Logger } from '@repo/service';
import type { SyncRequestType, SyncType } from '@repo/relay-protocol';
import type { RelayLimits, RelayTiming } from '../config';
import type { Connection } from '../connection';
import type { PeerTlsOptions } from '../peer-tls';
import type { RelayCounters } from '../status';

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
export interface Dialer {
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

/** A `sync_request` waiting for its `sync_response`. */
export interface PendingSync {
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

/** Everything the mesh holds, in one object its modules receive. */
export interface MeshState {
  readonly options: MeshOptions;
  /** Linked peers by relay id: their open links. */
  readonly peers: Map<string, Set<Connection>>;
  /** Every peer id ever linked (an unknown target is NOT_FOUND, a known one CONNECTION_ERROR). */
  readonly knownPeers: Set<string>;
  readonly dialers: Dialer[];
  readonly dialerOf: Map<Connection, Dialer>;
  readonly pendingSyncs: Map<string, PendingSync>;
  started: boolean;
}

/** `host:port` of a peer URL. */
export function hostPort(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'wss:' ? 443 : 80)}`;
}
