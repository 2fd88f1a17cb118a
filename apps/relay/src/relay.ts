import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { WebSocketServer } from 'ws';
import type { TrustProxy } from '@repo/http';
import type { Logger } from '@repo/service';
import { SYNC_TYPES, type SyncRequestType } from '@repo/relay-protocol';
import type { RelayLimits, RelayTiming } from './config';
import { accept, peerEvents, revokeTokens, track, type MessageRouter } from './core/connections';
import { acceptEvent } from './core/events';
import { recordConfirmed } from './core/healing';
import { ownSync, snapshot, type RelayState } from './core/state';
import { subscribe } from './core/subscribe';
import { metricsChanged, pushSync, startTimers, stopTimers } from './core/timers';
import type { EventLog } from './event-log';
import { createFanOut, type FanOut } from './fan-out';
import { createMessageHandler } from './handlers';
import { createMesh, type Mesh, type RelayEntry } from './mesh';
import { createMessageGuard } from './message-guard';
import type { PeerTlsOptions } from './peer-tls';
import { ALL_SCOPES } from './scopes';
import { createSeenIds } from './seen-ids';
import { createCounters, healthRecord, metricsRecord, statusRecord, statusReply, type RelayCounters } from './status';
import { createStatsSampler } from './system-stats';
import { createUpgradeHandler, type ClientToken, type UpgradeHandler } from './upgrade';

export type { RelayEntry } from './mesh';
export type { RelayCounters } from './status';

/** Options of {@link createRelay}. */
export interface RelayOptions {
  relayId: string;
  /** Whose `X-Forwarded-For` names a WebSocket client's address in the logs (docs/README.md, "Trusted proxies"). */
  trustProxy?: TrustProxy;
  version: string;
  /** Token of the silent-payment service (docs/relay.md, "Publishing"). */
  publishToken: string;
  /** Token every client must present; undefined: anyone may connect. */
  authToken?: string;
  /** Token peers present to each other. */
  meshToken: string;
  /** The variable the mesh token comes from (named when a peer refuses it). */
  meshTokenSource?: string;
  /** Looks a client token up in the token file; undefined: no token file. */
  clientToken?: (token: string) => ClientToken | undefined;
  /** Payment events go to every client, whatever its token. */
  paymentsPublic?: boolean;
  /** Peer relay URLs to keep a connection to. */
  peers: string[];
  /** The durable log of events (replay, healing, de-duplication); the relay closes it. */
  eventLog: EventLog;
  peerTls?: PeerTlsOptions;
  limits: RelayLimits;
  timing: RelayTiming;
  logger: Logger;
}

/** The relay: WebSocket clients, publishers and the mesh of peers. */
export interface Relay {
  readonly relayId: string;
  readonly version: string;
  /** Serves WebSocket upgrades of `server` (authentication and limits in the `upgrade` event). */
  attach(server: HttpServer | HttpsServer): void;
  /** Starts the timers and the connections to the configured peers. */
  start(): void;
  /**
   * Adds a peer relay URL at run time (as if it were in RELAY_PEERS) and connects to it once
   * started. Throws TypeError unless `url` is a `ws://` or `wss://` URL.
   */
  addPeer(url: string): void;
  /** Closes every connection and timer. */
  close(): Promise<void>;
  /** Closes the client connections admitted by these token-file names (removed or changed tokens). */
  revokeTokens(names: string[]): void;
  health(): ReturnType<typeof healthRecord>;
  status(): Record<string, unknown>;
  metrics(): Record<string, unknown>;
  relays(): RelayEntry[];
  /** Accepted WebSocket connections (clients, publishers and inbound peers). */
  readonly connectionCount: number;
  readonly counters: Readonly<RelayCounters>;
  /**
   * Asks `target` (a peer's relay id, `all` peers, or this relay's own id to push its own state)
   * for a sync; what the target reports reaches this relay's clients as the sync message. Throws
   * AppError NOT_FOUND for an unknown relay and CONNECTION_ERROR when a target is unreachable or
   * does not answer in time.
   */
  requestSync(syncType: SyncRequestType, target: string): Promise<{ success: true; message: string; sync_id: string }>;
}

/** A handshake server whose connections may send frames of at most `maxPayload` bytes. */
function handshakes(maxPayload: number): WebSocketServer {
  return new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false, clientTracking: false });
}

/** The relay's state, before the mesh and the fan-out are wired to it. */
function createState(options: RelayOptions): RelayState {
  const { limits, logger } = options;
  const counters = createCounters();
  const state: RelayState = {
    relayId: options.relayId,
    version: options.version,
    startedAt: Date.now(),
    limits,
    timing: options.timing,
    logger,
    counters,
    connections: new Set(),
    seen: createSeenIds({ maxIds: limits.dedupMaxIds, ttlMs: limits.dedupTtlMs }),
    log: options.eventLog,
    sampler: createStatsSampler(),
    wss: { full: handshakes(limits.maxMessageBytes), client: handshakes(limits.maxClientMessageBytes) },
    guard: createMessageGuard(limits),
    replay: {
      log: options.eventLog,
      counters,
      logger,
      highWaterBytes: Math.floor(limits.maxSendBufferBytes / 2),
      lastLiveSeq: () => state.fanOut.lastSeq,
    },
    peerConfirmed: new Map(),
    timers: {},
    mesh: undefined as unknown as Mesh,
    fanOut: undefined as unknown as FanOut,
    lastBlockHeight: 0,
    closed: false,
    deliveries: Promise.resolve(),
  };
  return state;
}

/**
 * Creates a relay (not listening: {@link Relay.attach} it to a server) by wiring its parts around
 * one state object (`core/state.ts`): the upgrade handler (authorization once per connection), the
 * connections, the fan-out, the mesh and the message handlers. Events published by the
 * silent-payment service or forwarded by a peer are delivered to every subscribed client once and
 * forwarded once to every other peer, de-duplicated by message id, so an event crosses a mesh
 * with cycles and never returns to the link it came from.
 */
export function createRelay(options: RelayOptions): Relay {
  const state = createState(options);
  const { relayId, version, counters, logger, limits, timing } = state;
  state.mesh = createMesh({
    relayId,
    version,
    meshToken: options.meshToken,
    meshTokenSource: options.meshTokenSource ?? 'RELAY_MESH_TOKEN',
    peerTls: options.peerTls ?? { fingerprints: [] },
    limits,
    timing,
    counters,
    logger,
    isClosed: () => state.closed,
    // Called once started, when a peer is dialled: `route` is defined by then.
    openOutbound: (ws, address) => track(state, route, ws, true, address, { publisher: false, meshAllowed: true, scopes: ALL_SCOPES }),
    ...peerEvents(state),
  });
  state.fanOut = createFanOut(state.connections, state.mesh);
  const route: MessageRouter = createMessageHandler({
    relayId,
    version,
    counters,
    logger,
    guard: state.guard,
    mesh: state.mesh,
    syncData: (type) => ownSync(state, type),
    statusReply: () => statusReply(snapshot(state)),
    onEvent: (conn, message) => acceptEvent(state, conn, message),
    onSubscribe: (conn, subscription, requestId) => subscribe(state, conn, subscription, requestId),
  });
  const handleUpgrade = createUpgradeHandler({
    wss: (roles) => (roles.publisher || roles.meshAllowed ? state.wss.full : state.wss.client),
    maxConnections: limits.maxWsConnections,
    counters,
    logger,
    isClosed: () => state.closed,
    trustProxy: options.trustProxy,
    credentials: () => ({
      publishToken: options.publishToken,
      meshToken: options.meshToken,
      authToken: options.authToken,
      clientToken: options.clientToken ?? (() => undefined),
      paymentsPublic: options.paymentsPublic ?? false,
    }),
    onConnection: (ws, address, roles, ip, url) => accept(state, track(state, route, ws, false, address, roles, ip), url),
  });
  for (const url of options.peers) state.mesh.addPeer(url);
  return relayApi(state, handleUpgrade);
}

/** The {@link Relay} of a wired state. */
function relayApi(state: RelayState, handleUpgrade: UpgradeHandler): Relay {
  const { relayId, version, mesh } = state;
  const servers: (HttpServer | HttpsServer)[] = [];
  return {
    relayId,
    version,
    get connectionCount() {
      return handleUpgrade.open;
    },
    counters: state.counters,
    attach(server) {
      servers.push(server);
      server.on('upgrade', handleUpgrade);
    },
    start() {
      startTimers(state);
      mesh.start();
    },
    addPeer: (url) => mesh.addPeer(url),
    revokeTokens: (names) => revokeTokens(state, names),
    async close() {
      if (state.closed) return;
      state.closed = true;
      stopTimers(state);
      for (const server of servers) server.off('upgrade', handleUpgrade);
      recordConfirmed(state);
      const open = new Set([...state.connections, ...mesh.stop()]);
      await Promise.all([...open].map((conn) => conn.shutdown()));
      state.wss.full.close();
      state.wss.client.close();
      await state.deliveries;
      await state.log.close();
    },
    health: () => healthRecord(snapshot(state)),
    status: () => statusRecord(snapshot(state)),
    metrics: () => metricsRecord(snapshot(state)),
    relays: () => mesh.relays(),
    async requestSync(syncType, target) {
      const syncId = randomUUID();
      const types = syncType === 'all' ? [...SYNC_TYPES] : [syncType];
      if (target === relayId) {
        for (const type of types) pushSync(state, type);
        return { success: true, message: `${syncType} of ${relayId} sent to its clients and ${mesh.size} peer(s)`, sync_id: syncId };
      }
      try {
        const targets = await mesh.requestSync(syncType, target, syncId);
        return { success: true, message: `${syncType} completed with ${targets.join(', ')}`, sync_id: syncId };
      } catch (err) {
        metricsChanged(state);
        throw err;
      }
    },
  };
}
