import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { AppError } from '@repo/errors';
import { equalStrings } from '@repo/crypto';
import type { Logger } from '@repo/service';
import type { RelayLimits, RelayTiming } from './config';
import { backoffDelay } from './backoff';
import {
  InvalidMessageError,
  SYNC_TYPES,
  assertPaymentEvent,
  createEnvelope,
  createErrorMessage,
  isPaymentEventType,
  isSyncType,
  parseEnvelope,
  parseSubscription,
  type Envelope,
  type EventType,
  type SyncType,
} from './messages';
import { peerTlsClientOptions, type PeerTlsOptions } from './peer-tls';
import { createSeenIds } from './seen-ids';
import { createStatsSampler } from './system-stats';

/** Options of {@link createRelay}. */
export interface RelayOptions {
  relayId: string;
  version: string;
  /** Token of the silent-payment service (docs/relay.md, "Publishing"). */
  publishToken: string;
  /** Token every client must present; undefined: anyone may connect. */
  authToken?: string;
  /** Token peers present to each other. */
  meshToken: string;
  /** Peer relay URLs to keep a connection to. */
  peers: string[];
  peerTls?: PeerTlsOptions;
  limits: RelayLimits;
  timing: RelayTiming;
  logger: Logger;
}

/** `sync_type` values of `POST /sync`: the three sync messages, or `all` of them. */
export const SYNC_REQUEST_TYPES = [...SYNC_TYPES, 'all'] as const;
/** One of {@link SYNC_REQUEST_TYPES}. */
export type SyncRequestType = (typeof SYNC_REQUEST_TYPES)[number];

/** Relay entry of `GET /relays` (docs/relay.md, "HTTP records"), plus what the peer last told us. */
export interface RelayEntry {
  relay_id: string;
  address: string;
  status: 'connected';
  connected_since: number;
  last_heartbeat: number;
  direction: 'outbound' | 'inbound';
  last_sync: Partial<Record<SyncType, Record<string, unknown>>>;
}

/** Counters behind `/metrics`, `/status` and MetricsSync. */
export interface RelayCounters {
  messages_sent: number;
  messages_received: number;
  sync_errors: number;
  last_sync_timestamp: number;
  events_published: number;
  duplicates_dropped: number;
  slow_consumers_dropped: number;
  upgrades_refused: number;
  peer_connect_failures: number;
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
  health(): { status: string; relay_id: string; uptime: number; version: string; connected_relays: number };
  status(): Record<string, unknown>;
  metrics(): Record<string, unknown>;
  relays(): RelayEntry[];
  /** Connected WebSocket clients (peers included). */
  readonly connectionCount: number;
  readonly counters: Readonly<RelayCounters>;
  /**
   * Asks `target` (a peer's relay id, `all` peers, or this relay's own id to push its own state)
   * for a sync. Throws AppError NOT_FOUND for an unknown relay and CONNECTION_ERROR when a
   * target is unreachable or does not answer in time.
   */
  requestSync(syncType: SyncRequestType, target: string): Promise<{ success: true; message: string; sync_id: string }>;
}

interface Connection {
  ws: WebSocket;
  /** Dialled by us (a configured peer) or accepted. */
  outbound: boolean;
  publisher: boolean;
  /** May say hello as a relay (presented the mesh token, or we dialled it). */
  meshAllowed: boolean;
  /** Set once the other side said hello. */
  peerId: string | undefined;
  address: string;
  connectedSince: number;
  lastHeartbeat: number;
  alive: boolean;
  /** null: every event. */
  subscriptions: Set<EventType> | null;
  dropping: boolean;
  dropTimer: NodeJS.Timeout | undefined;
  lastSync: Partial<Record<SyncType, Record<string, unknown>>>;
  dialer: Dialer | undefined;
}

interface Dialer {
  url: string;
  attempt: number;
  timer: NodeJS.Timeout | undefined;
  conn: Connection | undefined;
  /** The relay id learnt from the peer's hello (kept across reconnections). */
  peerId: string | undefined;
  lastFailure: string | undefined;
}

interface PendingSync {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const BEARER_RE = /^Bearer\s+(\S+)$/i;
const RELAY_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;
const SLOW_CONSUMER_REASON = 'slow consumer: send buffer over limit';

/** Reads the token of an upgrade request: `Authorization: Bearer <t>` or `?token=<t>`. */
function requestToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const match = BEARER_RE.exec(header.trim());
    if (match) return match[1];
    return '';
  }
  const q = (req.url ?? '').indexOf('?');
  if (q >= 0) {
    const token = new URLSearchParams((req.url ?? '').slice(q + 1)).get('token');
    if (token !== null) return token;
  }
  return undefined;
}

/** Answers an upgrade request with a plain HTTP error and closes the socket (before any handshake). */
function refuseUpgrade(
  socket: Duplex,
  status: number,
  reason: string,
  code: string,
  message: string,
  extra: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error: { code, message } });
  const headers = {
    Connection: 'close',
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    ...extra,
  };
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Creates a relay (not listening: {@link Relay.attach} it to a server). Events published by the
 * silent-payment service or forwarded by a peer are delivered to every subscribed client once
 * and forwarded once to every other peer, de-duplicated by message id, so an event crosses a
 * mesh with cycles and never returns to the link it came from.
 */
export function createRelay(options: RelayOptions): Relay {
  const { relayId, version, limits, timing, logger } = options;
  const startedAt = Date.now();
  const sampler = createStatsSampler();
  const seen = createSeenIds({ maxIds: limits.dedupMaxIds, ttlMs: limits.dedupTtlMs });
  const connections = new Set<Connection>();
  const peers = new Map<string, Set<Connection>>();
  const knownPeers = new Set<string>();
  const dialers: Dialer[] = [];
  const pendingSyncs = new Map<string, PendingSync>();
  const counters: RelayCounters = {
    messages_sent: 0,
    messages_received: 0,
    sync_errors: 0,
    last_sync_timestamp: 0,
    events_published: 0,
    duplicates_dropped: 0,
    slow_consumers_dropped: 0,
    upgrades_refused: 0,
    peer_connect_failures: 0,
  };
  let lastBlockHeight = 0;
  let pendingUpgrades = 0;
  let inboundCount = 0;
  let closed = false;
  let started = false;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let syncTimer: NodeJS.Timeout | undefined;
  let metricsTimer: NodeJS.Timeout | undefined;
  const servers: (HttpServer | HttpsServer)[] = [];

  const wss = new WebSocketServer({
    noServer: true,
    // A frame announcing more than this is refused from its header (close 1009), never buffered.
    maxPayload: limits.maxMessageBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });

  const uptime = () => Math.floor((Date.now() - startedAt) / 1000);
  const connectedRelays = () => peers.size;

  // ---- sending ---------------------------------------------------------------------------

  /** Sends one serialised message, or drops a consumer whose send buffer is over the bound. */
  function sendRaw(conn: Connection, frame: Buffer): boolean {
    const ws = conn.ws;
    if (conn.dropping || ws.readyState !== WebSocket.OPEN) return false;
    if (ws.bufferedAmount > limits.maxSendBufferBytes) {
      dropSlowConsumer(conn);
      return false;
    }
    ws.send(frame, { binary: false });
    counters.messages_sent++;
    return true;
  }

  function send(conn: Connection, message: Envelope<object>): boolean {
    return sendRaw(conn, Buffer.from(JSON.stringify(message)));
  }

  function dropSlowConsumer(conn: Connection): void {
    conn.dropping = true;
    counters.slow_consumers_dropped++;
    logger.warn({ address: conn.address, buffered: conn.ws.bufferedAmount, peer: conn.peerId }, 'disconnecting slow consumer');
    conn.ws.close(1008, SLOW_CONSUMER_REASON);
    // The close frame waits behind the unread data: cut the connection if it is not read soon.
    conn.dropTimer = setTimeout(() => conn.ws.terminate(), timing.slowConsumerGraceMs);
  }

  /** A connection that gets client broadcasts: accepted and not a peer relay. */
  const isClient = (conn: Connection) => !conn.outbound && conn.peerId === undefined;

  function broadcastToClients(message: Envelope<object>, type: EventType): void {
    let frame: Buffer | undefined;
    for (const conn of connections) {
      if (!isClient(conn)) continue;
      if (conn.subscriptions !== null && !conn.subscriptions.has(type)) continue;
      frame ??= Buffer.from(JSON.stringify(message));
      sendRaw(conn, frame);
    }
  }

  function broadcastError(message: Envelope<object>): void {
    const frame = Buffer.from(JSON.stringify(message));
    for (const conn of connections) if (isClient(conn)) sendRaw(conn, frame);
  }

  /** One open link per peer relay, preferring the one we dialled. */
  function linkOf(peerId: string): Connection | undefined {
    const links = peers.get(peerId);
    if (links === undefined) return undefined;
    let best: Connection | undefined;
    for (const link of links) {
      if (link.dropping || link.ws.readyState !== WebSocket.OPEN) continue;
      if (best === undefined || (link.outbound && !best.outbound)) best = link;
    }
    return best;
  }

  function sendToPeers(frame: Buffer, exceptPeerId: string | undefined): void {
    for (const peerId of peers.keys()) {
      if (peerId === exceptPeerId) continue;
      const link = linkOf(peerId);
      if (link !== undefined) sendRaw(link, frame);
    }
  }

  // ---- sync messages ---------------------------------------------------------------------

  function syncData(type: SyncType): Record<string, unknown> {
    switch (type) {
      case 'StateSync':
        return {
          relay_id: relayId,
          state: 'running',
          version,
          uptime: uptime(),
          connected_relays: connectedRelays(),
          last_block_height: lastBlockHeight,
        };
      case 'HealthSync':
        return { relay_id: relayId, status: 'healthy', uptime: uptime(), ...sampler.sample() };
      case 'MetricsSync':
        return {
          relay_id: relayId,
          messages_sent: counters.messages_sent,
          messages_received: counters.messages_received,
          sync_errors: counters.sync_errors,
          connected_relays: connectedRelays(),
        };
    }
  }

  /** Sends this relay's own sync message of `type` to its clients and its peers. */
  function pushSync(type: SyncType): void {
    const message = createEnvelope(type, syncData(type));
    broadcastToClients(message, type);
    if (peers.size > 0) {
      sendToPeers(Buffer.from(JSON.stringify(message)), undefined);
      counters.last_sync_timestamp = Date.now();
    }
  }

  /** MetricsSync "on change": coalesces bursts of changes into one message. */
  function metricsChanged(): void {
    if (closed || metricsTimer !== undefined) return;
    metricsTimer = setTimeout(() => {
      metricsTimer = undefined;
      pushSync('MetricsSync');
    }, 50);
  }

  // ---- peers -----------------------------------------------------------------------------

  function registerPeer(conn: Connection, peerId: string): void {
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
    if (conn.dialer !== undefined) {
      conn.dialer.attempt = 0;
      conn.dialer.peerId = peerId;
      conn.dialer.lastFailure = undefined;
    }
    if (isNew) {
      logger.info({ peer: peerId, address: conn.address, direction: conn.outbound ? 'outbound' : 'inbound' }, 'peer relay connected');
      metricsChanged();
    }
    // Exchange state at once, so /relays shows the peer's figures without waiting for the timer.
    for (const type of SYNC_TYPES) send(conn, createEnvelope(type, syncData(type)));
    counters.last_sync_timestamp = Date.now();
  }

  function unregisterPeer(conn: Connection, reason: string): void {
    const peerId = conn.peerId;
    if (peerId === undefined) return;
    const links = peers.get(peerId);
    if (links === undefined) return;
    links.delete(conn);
    if (links.size > 0) return;
    peers.delete(peerId);
    logger.warn({ peer: peerId, address: conn.address, reason }, 'peer relay unreachable');
    // docs/relay.md, "WebSocket errors": CONNECTION_ERROR tells clients a relay became unreachable.
    broadcastError(
      createErrorMessage('CONNECTION_ERROR', `relay ${peerId} is unreachable`, `connection to ${conn.address} closed: ${reason}`),
    );
    metricsChanged();
  }

  function scheduleDial(dialer: Dialer): void {
    if (closed) return;
    const delay = backoffDelay(dialer.attempt, timing.reconnectMinMs, timing.reconnectMaxMs);
    dialer.attempt++;
    dialer.timer = setTimeout(() => {
      dialer.timer = undefined;
      void dial(dialer);
    }, delay);
  }

  function dialFailed(dialer: Dialer, reason: string, wasLinked: boolean): void {
    if (closed) return;
    dialer.conn = undefined;
    if (!wasLinked) counters.peer_connect_failures++;
    // One warning per distinct reason, not one per retry.
    if (dialer.lastFailure !== reason) {
      logger.warn({ peer_url: dialer.url, reason }, 'cannot reach peer relay; retrying with backoff');
      dialer.lastFailure = reason;
    }
    scheduleDial(dialer);
  }

  function connectedToDialerPeer(dialer: Dialer): boolean {
    return dialer.peerId !== undefined && peers.has(dialer.peerId);
  }

  async function dial(dialer: Dialer): Promise<void> {
    if (closed) return;
    const url = new URL(dialer.url);
    let tlsOptions;
    try {
      tlsOptions = await peerTlsClientOptions(url, options.peerTls ?? { fingerprints: [] });
    } catch (err) {
      dialFailed(dialer, (err as Error).message, false);
      return;
    }
    if (closed) return;
    const ws = new WebSocket(dialer.url, {
      ...tlsOptions,
      headers: { Authorization: `Bearer ${options.meshToken}` },
      handshakeTimeout: Math.max(1_000, timing.syncTimeoutMs),
      maxPayload: limits.maxMessageBytes,
      perMessageDeflate: false,
    });
    const conn = createConnection(ws, true, `${url.hostname}:${url.port || (url.protocol === 'wss:' ? 443 : 80)}`, {
      publisher: false,
      meshAllowed: true,
    });
    conn.dialer = dialer;
    dialer.conn = conn;
    let failure = 'connection closed';
    ws.on('unexpected-response', (_req, res) => {
      failure = `peer answered HTTP ${res.statusCode}${res.statusCode === 401 ? ' (check RELAY_MESH_TOKEN)' : ''}`;
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err) => {
      failure = err.message;
    });
    ws.on('open', () => {
      connections.add(conn);
      send(conn, createEnvelope('hello', { relay_id: relayId, version }));
    });
    ws.on('close', (code, reason) => {
      const wasOpen = connections.delete(conn);
      if (conn.dropTimer) clearTimeout(conn.dropTimer);
      if (wasOpen) failure = `closed with ${code}${reason.length > 0 ? ` (${reason.toString()})` : ''}`;
      const wasLinked = conn.peerId !== undefined;
      unregisterPeer(conn, failure);
      dialFailed(dialer, failure, wasLinked);
    });
  }

  // ---- connections -----------------------------------------------------------------------

  function createConnection(
    ws: WebSocket,
    outbound: boolean,
    address: string,
    roles: { publisher: boolean; meshAllowed: boolean },
  ): Connection {
    const conn: Connection = {
      ws,
      outbound,
      publisher: roles.publisher,
      meshAllowed: roles.meshAllowed,
      peerId: undefined,
      address,
      connectedSince: Date.now(),
      lastHeartbeat: Date.now(),
      alive: true,
      subscriptions: null,
      dropping: false,
      dropTimer: undefined,
      lastSync: {},
      dialer: undefined,
    };
    ws.on('message', (data, isBinary) => handleMessage(conn, data, isBinary));
    ws.on('pong', () => {
      conn.alive = true;
      conn.lastHeartbeat = Date.now();
    });
    return conn;
  }

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (closed) {
      counters.upgrades_refused++;
      refuseUpgrade(socket, 503, 'Service Unavailable', 'SERVICE_UNAVAILABLE', 'relay is shutting down');
      return;
    }
    const token = requestToken(req);
    const publisher = token !== undefined && token !== '' && equalStrings(token, options.publishToken);
    const meshAllowed = token !== undefined && token !== '' && equalStrings(token, options.meshToken);
    const client = options.authToken !== undefined && token !== undefined && token !== '' && equalStrings(token, options.authToken);
    // A token that matches nothing is refused even on an open relay: a typo should fail loudly.
    if (
      (token !== undefined && !publisher && !meshAllowed && !client) ||
      (options.authToken !== undefined && !publisher && !meshAllowed && !client)
    ) {
      counters.upgrades_refused++;
      refuseUpgrade(socket, 401, 'Unauthorized', 'UNAUTHORIZED', 'a valid token is required (Authorization: Bearer <token> or ?token=)', {
        'WWW-Authenticate': 'Bearer realm="relay"',
      });
      return;
    }
    if (inboundCount + pendingUpgrades >= limits.maxWsConnections) {
      counters.upgrades_refused++;
      logger.warn({ open: inboundCount, max: limits.maxWsConnections }, 'upgrade refused: too many connections');
      refuseUpgrade(socket, 503, 'Service Unavailable', 'SERVICE_UNAVAILABLE', `too many connections (limit ${limits.maxWsConnections})`, {
        'Retry-After': '5',
      });
      return;
    }
    pendingUpgrades++;
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        pendingUpgrades--;
      }
    };
    socket.once('close', settle);
    wss.handleUpgrade(req, socket, head, (ws) => {
      settle();
      socket.off('close', settle);
      const address = `${req.socket.remoteAddress ?? 'unknown'}:${req.socket.remotePort ?? 0}`;
      onInbound(ws, address, { publisher, meshAllowed });
    });
  }

  function onInbound(ws: WebSocket, address: string, roles: { publisher: boolean; meshAllowed: boolean }): void {
    if (closed) {
      ws.terminate();
      return;
    }
    const conn = createConnection(ws, false, address, roles);
    connections.add(conn);
    inboundCount++;
    ws.on('error', (err) => logger.debug({ address, err: err.message }, 'client connection error'));
    ws.on('close', () => {
      connections.delete(conn);
      inboundCount--;
      if (conn.dropTimer) clearTimeout(conn.dropTimer);
      unregisterPeer(conn, 'connection closed');
    });
    // A new client learns the relay's state at once instead of waiting for the next period.
    send(conn, createEnvelope('StateSync', syncData('StateSync')));
  }

  // ---- messages --------------------------------------------------------------------------

  function replyError(conn: Connection, err: InvalidMessageError): void {
    send(conn, createErrorMessage('INVALID_MESSAGE', err.message, err.details, err.requestId));
  }

  function handleMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    counters.messages_received++;
    if (conn.peerId !== undefined) conn.lastHeartbeat = Date.now();
    if (isBinary) {
      replyError(conn, new InvalidMessageError('binary messages are not accepted', 'send JSON text frames'));
      return;
    }
    try {
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      dispatch(conn, parseEnvelope(text));
    } catch (err) {
      if (err instanceof InvalidMessageError) {
        if (conn.peerId !== undefined || conn.outbound) {
          counters.sync_errors++;
          logger.warn({ peer: conn.peerId, address: conn.address, error: err.message }, 'invalid message from peer');
          if (conn.outbound) return; // never answer a peer's error with an error (no ping-pong of errors)
        }
        replyError(conn, err);
        return;
      }
      logger.error({ err, address: conn.address }, 'message handling failed');
    }
  }

  function dispatch(conn: Connection, message: Envelope): void {
    const type = message.type;
    if (isPaymentEventType(type)) {
      handleEvent(conn, message);
      return;
    }
    if (isSyncType(type)) {
      if (conn.peerId === undefined && !conn.outbound) {
        throw new InvalidMessageError(`${type} is a server message`, 'clients may send ping, get_status and subscribe', message.id);
      }
      conn.lastSync[type] = message.data;
      counters.last_sync_timestamp = Date.now();
      return;
    }
    switch (type) {
      case 'ping':
        send(conn, createEnvelope('pong', { relay_id: relayId }, message.id));
        return;
      case 'get_status':
        send(
          conn,
          createEnvelope(
            'status',
            {
              relay_id: relayId,
              status: 'running',
              uptime: uptime(),
              connected_relays: connectedRelays(),
              last_block_height: lastBlockHeight,
            },
            message.id,
          ),
        );
        return;
      case 'subscribe': {
        const types = parseSubscription(message);
        conn.subscriptions = types === undefined ? null : new Set(types);
        send(conn, createEnvelope('subscribed', { types: types ?? 'all' }, message.id));
        return;
      }
      case 'hello':
        handleHello(conn, message);
        return;
      case 'sync_request':
        handleSyncRequest(conn, message);
        return;
      case 'sync_response':
        handleSyncResponse(conn, message);
        return;
      case 'pong':
      case 'status':
      case 'subscribed':
      case 'ack':
        // Replies a peer sends to our own commands: nothing to do.
        if (conn.outbound || conn.peerId !== undefined) return;
        break;
      case 'error':
        if (conn.outbound || conn.peerId !== undefined) {
          counters.sync_errors++;
          logger.warn({ peer: conn.peerId, data: message.data }, 'peer relay reported an error');
          return;
        }
        break;
    }
    throw new InvalidMessageError(
      `unknown message type: ${type.slice(0, 64)}`,
      'clients may send ping, get_status and subscribe; publishers TransactionReceived and BlockScanned',
      message.id,
    );
  }

  function handleEvent(conn: Connection, message: Envelope): void {
    const fromPeer = conn.peerId !== undefined;
    if (!fromPeer && !conn.publisher) {
      throw new InvalidMessageError(
        'publishing events needs the publisher token',
        'connect with Authorization: Bearer <RELAY_PUBLISH_TOKEN> to publish TransactionReceived or BlockScanned',
        message.id,
      );
    }
    assertPaymentEvent(message);
    if (!fromPeer) {
      send(conn, createEnvelope('ack', {}, message.id));
      counters.events_published++;
    }
    deliverEvent(message, conn.peerId);
  }

  function deliverEvent(message: Envelope, fromPeerId: string | undefined): void {
    if (!seen.add(message.id)) {
      counters.duplicates_dropped++;
      return;
    }
    if (message.type === 'BlockScanned') {
      const height = message.data.block_height as number;
      if (height > lastBlockHeight) lastBlockHeight = height;
    }
    const event: Envelope = { type: message.type, id: message.id, timestamp: message.timestamp, data: message.data };
    const frame = Buffer.from(JSON.stringify(event));
    for (const conn of connections) {
      if (!isClient(conn)) continue;
      if (conn.subscriptions !== null && !conn.subscriptions.has(message.type as EventType)) continue;
      sendRaw(conn, frame);
    }
    sendToPeers(frame, fromPeerId);
  }

  function handleHello(conn: Connection, message: Envelope): void {
    if (!conn.meshAllowed) {
      throw new InvalidMessageError(
        'peering needs the mesh token',
        'a relay connects with Authorization: Bearer <RELAY_MESH_TOKEN>',
        message.id,
      );
    }
    const peerId = message.data.relay_id;
    if (typeof peerId !== 'string' || !RELAY_ID_RE.test(peerId)) {
      throw new InvalidMessageError('invalid field: data.relay_id', '"relay_id" expected 1 to 64 characters [A-Za-z0-9._:-]', message.id);
    }
    if (conn.peerId !== undefined) return;
    if (peerId === relayId) {
      logger.warn({ address: conn.address }, 'peer has our own relay id (a relay listed as its own peer?): closing');
      if (conn.dialer !== undefined) conn.dialer.attempt = Math.max(conn.dialer.attempt, 10);
      conn.ws.close(1008, 'same relay_id');
      return;
    }
    if (!conn.outbound) send(conn, createEnvelope('hello', { relay_id: relayId, version }, message.id));
    registerPeer(conn, peerId);
  }

  function handleSyncRequest(conn: Connection, message: Envelope): void {
    if (conn.peerId === undefined) {
      throw new InvalidMessageError('sync_request is a relay message', 'say hello with the mesh token first', message.id);
    }
    const syncType = message.data.sync_type;
    if (typeof syncType !== 'string' || !(SYNC_REQUEST_TYPES as readonly string[]).includes(syncType)) {
      throw new InvalidMessageError('invalid field: data.sync_type', `expected one of ${SYNC_REQUEST_TYPES.join(', ')}`, message.id);
    }
    const types = syncType === 'all' ? [...SYNC_TYPES] : [syncType as SyncType];
    const messages = types.map((t) => createEnvelope(t, syncData(t)));
    send(conn, createEnvelope('sync_response', { relay_id: relayId, sync_type: syncType, messages }, message.id));
    counters.last_sync_timestamp = Date.now();
  }

  function handleSyncResponse(conn: Connection, message: Envelope): void {
    if (conn.peerId === undefined) {
      throw new InvalidMessageError('sync_response is a relay message', 'say hello with the mesh token first', message.id);
    }
    const messages = message.data.messages;
    if (Array.isArray(messages)) {
      for (const m of messages as unknown[]) {
        if (typeof m === 'object' && m !== null && typeof (m as Envelope).type === 'string' && isSyncType((m as Envelope).type)) {
          const data = (m as Envelope).data;
          if (typeof data === 'object' && data !== null) conn.lastSync[(m as Envelope).type as SyncType] = data;
        }
      }
    }
    counters.last_sync_timestamp = Date.now();
    const pending = pendingSyncs.get(message.id);
    if (pending !== undefined) pending.resolve();
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
      if (!send(link, createEnvelope('sync_request', { sync_type: syncType }, requestId))) {
        done(new Error(`relay ${peerId} is unreachable`));
      }
    });
  }

  // ---- timers ----------------------------------------------------------------------------

  function heartbeat(): void {
    for (const conn of connections) {
      if (!conn.alive) {
        // RFC 6455 5.5.2: a peer that does not answer our ping in a whole interval is gone.
        logger.info({ address: conn.address, peer: conn.peerId }, 'heartbeat: no pong, terminating connection');
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      try {
        conn.ws.ping();
      } catch {
        conn.ws.terminate();
      }
    }
  }

  function addDialer(url: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TypeError(`"url" expected a ws:// or wss:// URL, got ${JSON.stringify(url)}`);
    }
    if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
      throw new TypeError(`"url" expected a ws:// or wss:// URL, got ${JSON.stringify(url)}`);
    const dialer: Dialer = { url, attempt: 0, timer: undefined, conn: undefined, peerId: undefined, lastFailure: undefined };
    dialers.push(dialer);
    if (started && !closed) void dial(dialer);
  }
  for (const url of options.peers) addDialer(url);

  // ---- the relay -------------------------------------------------------------------------

  return {
    relayId,
    version,
    get connectionCount() {
      return inboundCount;
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
      started = true;
      for (const dialer of dialers) void dial(dialer);
    },
    addPeer(url) {
      addDialer(url);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeatTimer);
      clearInterval(syncTimer);
      clearTimeout(metricsTimer);
      for (const server of servers) server.off('upgrade', handleUpgrade);
      for (const dialer of dialers) clearTimeout(dialer.timer);
      for (const [id, pending] of pendingSyncs) {
        clearTimeout(pending.timer);
        pending.reject(new Error('relay is shutting down'));
        pendingSyncs.delete(id);
      }
      const open = [...connections];
      for (const dialer of dialers) if (dialer.conn !== undefined && !connections.has(dialer.conn)) open.push(dialer.conn);
      await Promise.all(
        open.map(
          (conn) =>
            new Promise<void>((resolve) => {
              if (conn.ws.readyState === WebSocket.CLOSED) {
                resolve();
                return;
              }
              conn.ws.once('close', () => resolve());
              if (conn.ws.readyState === WebSocket.OPEN) conn.ws.close(1001, 'relay shutting down');
              // Do not wait on a peer that does not answer the close handshake.
              const timer = setTimeout(() => conn.ws.terminate(), 500);
              conn.ws.once('close', () => clearTimeout(timer));
              if (conn.ws.readyState === WebSocket.CONNECTING) conn.ws.terminate();
            }),
        ),
      );
      for (const conn of open) if (conn.dropTimer) clearTimeout(conn.dropTimer);
      wss.close();
    },
    health() {
      return { status: 'healthy', relay_id: relayId, uptime: uptime(), version, connected_relays: connectedRelays() };
    },
    status() {
      return {
        relay_id: relayId,
        status: 'running',
        uptime: uptime(),
        version,
        connected_relays: connectedRelays(),
        last_block_height: lastBlockHeight,
        sync_metrics: {
          messages_sent: counters.messages_sent,
          messages_received: counters.messages_received,
          sync_errors: counters.sync_errors,
        },
        connected_clients: [...connections].filter(isClient).length,
      };
    },
    metrics() {
      const configured = dialers.length;
      const up = dialers.filter(connectedToDialerPeer).length;
      return {
        messages_sent: counters.messages_sent,
        messages_received: counters.messages_received,
        sync_errors: counters.sync_errors,
        last_sync_timestamp: counters.last_sync_timestamp,
        connected_relays: connectedRelays(),
        // Share of the configured peers we are linked to (1 with no configured peers).
        mesh_health: configured === 0 ? 1 : Math.round((up / configured) * 1000) / 1000,
        connected_clients: [...connections].filter(isClient).length,
        events_published: counters.events_published,
        duplicates_dropped: counters.duplicates_dropped,
        slow_consumers_dropped: counters.slow_consumers_dropped,
        upgrades_refused: counters.upgrades_refused,
        peer_connect_failures: counters.peer_connect_failures,
      };
    },
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
        entries.push({
          relay_id: peerId,
          address: link.address,
          status: 'connected',
          connected_since: link.connectedSince,
          last_heartbeat: lastHeartbeat,
          direction: link.outbound ? 'outbound' : 'inbound',
          last_sync: lastSync,
        });
      }
      return entries;
    },
    async requestSync(syncType, target) {
      const syncId = randomUUID();
      const types = syncType === 'all' ? [...SYNC_TYPES] : [syncType];
      if (target === relayId) {
        for (const type of types) pushSync(type);
        return {
          success: true,
          message: `${syncType} of ${relayId} sent to its clients and ${connectedRelays()} peer(s)`,
          sync_id: syncId,
        };
      }
      let targets: string[];
      if (target === 'all') {
        targets = [...peers.keys()];
        if (targets.length === 0) {
          counters.sync_errors++;
          throw new AppError('CONNECTION_ERROR', { message: 'no peer relay is connected', details: `configured peers: ${dialers.length}` });
        }
      } else if (peers.has(target)) {
        targets = [target];
      } else if (knownPeers.has(target)) {
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
        metricsChanged();
        throw new AppError('CONNECTION_ERROR', {
          message: `sync failed with ${failed.length} of ${targets.length} relay(s)`,
          details: failed.join('; '),
        });
      }
      return { success: true, message: `${syncType} completed with ${targets.join(', ')}`, sync_id: syncId };
    },
  };
}
