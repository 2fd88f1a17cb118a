import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '@repo/service';
import {
  InvalidMessageError,
  SYNC_TYPES,
  assertMessage,
  createErrorMessage,
  createMessage,
  type Envelope,
  type EventType,
  type Subscription,
  type SyncRequestType,
  type SyncType,
} from '@repo/relay-protocol';
import type { RelayLimits, RelayTiming } from './config';
import { Connection, type ConnectionRoles } from './connection';
import type { EventLog } from './event-log';
import { createFanOut } from './fan-out';
import { createMessageHandler } from './handlers';
import { createMesh, type RelayEntry } from './mesh';
import type { PeerTlsOptions } from './peer-tls';
import { healPeer, replayTo, type ReplayDeps } from './replay';
import { ALL_SCOPES, scopeOf } from './scopes';
import { createSeenIds } from './seen-ids';
import {
  createCounters,
  healthRecord,
  metricsRecord,
  statusRecord,
  statusReply,
  syncData,
  type RelayCounters,
  type RelaySnapshot,
} from './status';
import { createStatsSampler } from './system-stats';
import { createUpgradeHandler, type ClientToken } from './upgrade';
import type { TrustProxy } from '@repo/http';

export type { RelayEntry } from './mesh';
export type { RelayCounters } from './status';

/** How often the log's retention runs (ms). */
const RETENTION_INTERVAL_MS = 60_000;

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

/**
 * Creates a relay (not listening: {@link Relay.attach} it to a server) by wiring its parts: the
 * upgrade handler (authorization once per connection), the connections, the fan-out, the mesh
 * and the message handlers. Events published by the silent-payment service or forwarded by a
 * peer are delivered to every subscribed client once and forwarded once to every other peer,
 * de-duplicated by message id, so an event crosses a mesh with cycles and never returns to the
 * link it came from.
 */
export function createRelay(options: RelayOptions): Relay {
  const { relayId, version, limits, timing, logger } = options;
  const startedAt = Date.now();
  const sampler = createStatsSampler();
  const seen = createSeenIds({ maxIds: limits.dedupMaxIds, ttlMs: limits.dedupTtlMs });
  const counters = createCounters();
  const connections = new Set<Connection>();
  const servers: (HttpServer | HttpsServer)[] = [];
  let lastBlockHeight = 0;
  let closed = false;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let syncTimer: NodeJS.Timeout | undefined;
  let metricsTimer: NodeJS.Timeout | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;

  const wss = new WebSocketServer({
    noServer: true,
    // A frame announcing more than this is refused from its header (close 1009), never buffered.
    maxPayload: limits.maxMessageBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });
  const connectionDeps = {
    maxSendBufferBytes: limits.maxSendBufferBytes,
    slowConsumerGraceMs: timing.slowConsumerGraceMs,
    counters,
    logger,
  };

  const mesh = createMesh({
    relayId,
    version,
    meshToken: options.meshToken,
    meshTokenSource: options.meshTokenSource ?? 'RELAY_MESH_TOKEN',
    peerTls: options.peerTls ?? { fingerprints: [] },
    limits,
    timing,
    counters,
    logger,
    isClosed: () => closed,
    openOutbound(ws, address) {
      const conn = track(ws, true, address, { publisher: false, meshAllowed: true, scopes: ALL_SCOPES });
      return conn;
    },
    onLinked(conn, isNew) {
      if (isNew) {
        metricsChanged();
        void heal(conn);
      }
      // Exchange state at once, so /relays shows the peer's figures without waiting for the timer.
      for (const type of SYNC_TYPES) conn.sendMessage(createMessage(type, ownSync(type)));
      counters.last_sync_timestamp = Date.now();
    },
    onLost(peerId, conn, reason) {
      // CONNECTION_ERROR tells clients a relay became unreachable (docs/relay.md, "WebSocket errors").
      fanOut.errorToClients(
        createErrorMessage('CONNECTION_ERROR', `relay ${peerId} is unreachable`, `connection to ${conn.address} closed: ${reason}`),
      );
      metricsChanged();
    },
    onSyncReport(type, data) {
      // A manual sync is visible where it was asked for: the target's report goes to our clients.
      fanOut.send(createMessage(type, data as never), { type, toPeers: false });
    },
  });
  const fanOut = createFanOut(connections, mesh);

  const snapshot = (): RelaySnapshot => ({
    relayId,
    version,
    uptime: Math.floor((Date.now() - startedAt) / 1000),
    connectedRelays: mesh.size,
    connectedClients: [...connections].filter((c) => c.isClient).length,
    lastBlockHeight,
    configuredPeers: mesh.configuredCount(),
    linkedConfiguredPeers: mesh.linkedConfiguredCount(),
    counters,
  });
  const ownSync = <T extends SyncType>(type: T) => syncData(type, snapshot(), type === 'HealthSync' ? sampler.sample() : undefined);

  /** Sends this relay's own sync message of `type` to its clients and its peers. */
  function pushSync(type: SyncType): void {
    fanOut.send(createMessage(type, ownSync(type)), { type, toPeers: true });
    if (mesh.size > 0) counters.last_sync_timestamp = Date.now();
  }

  /** MetricsSync "on change": coalesces bursts of changes into one message. */
  function metricsChanged(): void {
    if (closed || metricsTimer !== undefined) return;
    metricsTimer = setTimeout(() => {
      metricsTimer = undefined;
      pushSync('MetricsSync');
    }, 50);
  }

  const log = options.eventLog;
  const replayDeps: ReplayDeps = { log, counters, logger, highWaterBytes: Math.floor(limits.maxSendBufferBytes / 2) };
  /** Deliveries in arrival order (appends are pipelined; each is delivered once stored, in turn). */
  let deliveries: Promise<void> = Promise.resolve();

  /**
   * An event from a publisher or a peer: validated, appended to the log, then acknowledged to a
   * publisher (only once durably stored, so a restart loses nothing acknowledged), then, the
   * first time its id is stored here, delivered to the clients and forwarded to the other peers.
   */
  function onEvent(conn: Connection, message: Envelope): void {
    const event = assertMessage(message);
    const type = event.type as EventType;
    const fromPeer = conn.peerId;
    const publisher = fromPeer === undefined;
    if (publisher) counters.events_published++;
    if (seen.has(event.id)) {
      // Already stored: ack again (a publisher retry) without touching the log.
      counters.duplicates_dropped++;
      if (publisher) conn.sendMessage(createMessage('ack', {}, event.id));
      return;
    }
    const clean: Envelope = { type, id: event.id, timestamp: event.timestamp, data: event.data };
    const text = JSON.stringify(clean);
    const stored = log.append({ id: event.id, type, text });
    deliveries = deliveries
      .then(() => stored)
      .then(
        ({ seq, fresh, durable }) => {
          // Acknowledged only once on disk, so a restart (even a power cut) loses nothing acknowledged.
          durable.then(
            () => {
              // Only now may a resent copy be acknowledged from the seen-id set without the log.
              seen.add(event.id);
              if (publisher) conn.sendMessage(createMessage('ack', {}, event.id));
            },
            (err: Error) => {
              if (publisher) notStored(conn, event.id, fromPeer, err);
            },
          );
          if (!fresh) {
            counters.duplicates_dropped++;
            return;
          }
          counters.events_stored++;
          if (event.type === 'BlockScanned' && event.data.block_height > lastBlockHeight) lastBlockHeight = event.data.block_height;
          fanOut.send(clean, { type, toPeers: true, fromPeer, seq, frame: Buffer.from(text) });
        },
        (err: Error) => notStored(conn, event.id, fromPeer, err),
      );
  }

  /** Not stored: not acknowledged. Closing makes the publisher reconnect and send it again. */
  function notStored(conn: Connection, id: string, fromPeer: string | undefined, err: Error): void {
    logger.error({ err: { message: err.message }, id, peer: fromPeer }, 'event log append failed: event not acknowledged');
    if (conn.isOpen) conn.ws.close(1011, 'event log unavailable');
  }

  /** Per peer: the time up to which it confirmed our data (see Connection.confirmedAt). */
  const peerConfirmed = new Map<string, number>();
  const confirmedKey = (peerId: string) => `peer-confirmed:${peerId}`;

  /**
   * A peer's first link came (back) up: sends it every event this relay stored since the peer
   * last confirmed our data (kept across restarts in the log; for a peer never linked before,
   * since this relay started), so a partition or a restart loses nothing (docs/relay.md, "The mesh heals").
   */
  async function heal(conn: Connection): Promise<void> {
    const peerId = conn.peerId!;
    conn.healing = true;
    try {
      const persisted = peerConfirmed.has(peerId) ? undefined : await log.getMeta(confirmedKey(peerId));
      const from = peerConfirmed.get(peerId) ?? (persisted !== undefined ? Number(persisted) : startedAt);
      peerConfirmed.set(peerId, from);
      conn.confirmedAt = from;
      const sent = await healPeer(conn, Math.max(0, from - timing.healOverlapMs), replayDeps);
      logger.info({ peer: peerId, since: from, sent }, 'mesh link up: sent the peer the events stored since it last confirmed');
    } catch (err) {
      logger.warn({ peer: peerId, err: { message: (err as Error).message } }, 'mesh heal failed: the event log could not be read');
    } finally {
      conn.healing = false;
      conn.healEndedAt = Date.now();
    }
  }

  /** Records how far each linked peer confirmed our data (at each heartbeat, and at close). */
  function recordConfirmed(): void {
    for (const peerId of mesh.peerIds()) {
      const link = mesh.linkOf(peerId);
      if (link === undefined || link.confirmedAt <= (peerConfirmed.get(peerId) ?? 0)) continue;
      peerConfirmed.set(peerId, link.confirmedAt);
      log.setMeta(confirmedKey(peerId), String(link.confirmedAt)).catch(() => undefined);
    }
  }

  function onSubscribe(conn: Connection, subscription: Subscription, requestId: string): void {
    if (conn.replaying) {
      throw new InvalidMessageError('a replay is in progress', 'send subscribe with since again once the replay ended', requestId);
    }
    const forbidden = (subscription.types ?? []).filter((t) => !conn.roles.scopes.has(scopeOf(t)));
    if (forbidden.length > 0) {
      throw new InvalidMessageError(
        `${forbidden.join(', ')} need the payments scope`,
        'connect with a token of RELAY_TOKEN_FILE that has the payments scope',
        requestId,
        'FORBIDDEN',
      );
    }
    conn.subscriptions = subscription.types === undefined ? null : new Set(subscription.types);
    if (subscription.since === undefined) {
      conn.sendMessage(createMessage('subscribed', { types: subscription.types ?? 'all' }, requestId));
      return;
    }
    void replayTo(conn, subscription.since, requestId, subscription.types, replayDeps);
  }

  const handleMessage = createMessageHandler({
    relayId,
    version,
    counters,
    logger,
    mesh,
    syncData: ownSync,
    statusReply: () => statusReply(snapshot()),
    onEvent,
    onSubscribe,
  });

  /** Wraps a socket in a connection, routes its messages and forgets it once closed. */
  function track(ws: WebSocket, outbound: boolean, address: string, roles: ConnectionRoles): Connection {
    const conn = new Connection(ws, outbound, address, roles, connectionDeps);
    ws.on('message', (data, isBinary) => handleMessage(conn, data, isBinary));
    if (outbound) ws.on('open', () => connections.add(conn));
    else connections.add(conn);
    ws.on('close', () => {
      connections.delete(conn);
      if (!outbound) mesh.unregister(conn, 'connection closed');
    });
    return conn;
  }

  const handleUpgrade = createUpgradeHandler({
    wss,
    maxConnections: limits.maxWsConnections,
    counters,
    logger,
    isClosed: () => closed,
    trustProxy: options.trustProxy,
    credentials: () => ({
      publishToken: options.publishToken,
      meshToken: options.meshToken,
      authToken: options.authToken,
      clientToken: options.clientToken ?? (() => undefined),
      paymentsPublic: options.paymentsPublic ?? false,
    }),
    onConnection(ws, address, roles) {
      const conn = track(ws, false, address, roles);
      logger.debug({ address, token: roles.tokenName, scopes: [...roles.scopes], publisher: roles.publisher }, 'connection accepted');
      ws.on('error', (err) => logger.debug({ address, err: err.message }, 'client connection error'));
      // A new client learns the relay's state at once instead of waiting for the next period.
      conn.sendMessage(createMessage('StateSync', ownSync('StateSync')));
    },
  });

  function heartbeat(): void {
    recordConfirmed();
    const now = Date.now();
    for (const conn of connections) {
      if (!conn.alive) {
        // RFC 6455 5.5.2: a peer that does not answer our ping in a whole interval is gone.
        logger.info({ address: conn.address, peer: conn.peerId }, 'heartbeat: no pong, terminating connection');
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

  for (const url of options.peers) mesh.addPeer(url);

  return {
    relayId,
    version,
    get connectionCount() {
      return handleUpgrade.open;
    },
    counters,
    attach(server) {
      servers.push(server);
      server.on('upgrade', handleUpgrade);
    },
    start() {
      heartbeatTimer = setInterval(heartbeat, timing.heartbeatIntervalMs);
      syncTimer = setInterval(() => {
        for (const type of SYNC_TYPES) pushSync(type);
      }, timing.syncIntervalMs);
      mesh.start();
      const trim = () =>
        log.trim().then(
          (removed) => removed > 0 && logger.info({ removed }, 'event log: retention removed old events'),
          (err: Error) => logger.warn({ err: { message: err.message } }, 'event log: retention failed'),
        );
      void trim();
      retentionTimer = setInterval(() => void trim(), RETENTION_INTERVAL_MS);
    },
    addPeer(url) {
      mesh.addPeer(url);
    },
    revokeTokens(names) {
      const gone = new Set(names);
      for (const conn of connections) {
        if (conn.roles.tokenName === undefined || !gone.has(conn.roles.tokenName)) continue;
        logger.info({ token: conn.roles.tokenName, address: conn.address }, 'closing a connection whose token was removed');
        conn.ws.close(1008, 'token revoked');
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeatTimer);
      clearInterval(syncTimer);
      clearTimeout(metricsTimer);
      clearInterval(retentionTimer);
      for (const server of servers) server.off('upgrade', handleUpgrade);
      recordConfirmed();
      const open = new Set([...connections, ...mesh.stop()]);
      await Promise.all([...open].map((conn) => conn.shutdown()));
      wss.close();
      await deliveries;
      await log.close();
    },
    health: () => healthRecord(snapshot()),
    status: () => statusRecord(snapshot()),
    metrics: () => metricsRecord(snapshot()),
    relays: () => mesh.relays(),
    async requestSync(syncType, target) {
      const syncId = randomUUID();
      const types = syncType === 'all' ? [...SYNC_TYPES] : [syncType];
      if (target === relayId) {
        for (const type of types) pushSync(type);
        return { success: true, message: `${syncType} of ${relayId} sent to its clients and ${mesh.size} peer(s)`, sync_id: syncId };
      }
      try {
        const targets = await mesh.requestSync(syncType, target, syncId);
        return { success: true, message: `${syncType} completed with ${targets.join(', ')}`, sync_id: syncId };
      } catch (err) {
        metricsChanged();
        throw err;
      }
    },
  };
}
