import { WebSocket } from 'ws';
import type { Scope, SubscriptionType, SyncType } from '@repo/relay-protocol';
import type { Logger } from '@repo/service';
import { newRateWindow, type GuardedSender, type RateWindow } from './message-guard';
import { scopeOf } from './scopes';
import type { RelayCounters } from './status';

/** What a connection may do, decided once at the upgrade (or at the dial) and never changed. */
export interface ConnectionRoles {
  /** Presented the publish token: may publish events. */
  publisher: boolean;
  /** Presented the mesh token, or we dialled it: may say hello as a relay. */
  meshAllowed: boolean;
  /** What it may receive (docs/relay.md, "Client tokens"). */
  scopes: ReadonlySet<Scope>;
  /** Name of its token in the token file (for logs), when it presented one. */
  tokenName?: string;
  /** Presented no token (an open relay's anonymous client): closed when idle (IDLE_CLIENT_TIMEOUT_MS). */
  anonymous?: boolean;
}

/** What a connection needs from the relay. */
export interface ConnectionDeps {
  maxSendBufferBytes: number;
  slowConsumerGraceMs: number;
  counters: RelayCounters;
  logger: Logger;
}

const SLOW_CONSUMER_REASON = 'slow consumer: send buffer over limit';

/** A live event that arrived while the connection was being replayed to: sent after the replay. */
interface Held {
  seq: string;
  frame: Buffer;
}

/** A subscription and the last seq fanned out before it applied. */
interface Applied {
  after: string | undefined;
  subscriptions: Set<SubscriptionType> | null;
}

/** Subscriptions remembered per connection (older ones are forgotten: their events may be replayed again). */
const MAX_APPLIED = 16;

/**
 * One WebSocket connection (client, publisher or peer link) with its send buffer bound: before
 * each send the buffered amount is checked, and a consumer over the bound is closed with 1008
 * (RFC 6455 7.4.1, policy violation) and cut after a grace period if the close is not read.
 */
export class Connection implements GuardedSender {
  readonly ws: WebSocket;
  /** Dialled by us (a configured peer) or accepted. */
  readonly outbound: boolean;
  readonly roles: ConnectionRoles;
  readonly address: string;
  /** The client's address without the port (the per-address message budget). */
  readonly ip: string;
  /** This connection's message window (CLIENT_MESSAGES_PER_SECOND). */
  rate: RateWindow = newRateWindow();
  readonly connectedSince = Date.now();
  /** Set once the other side said hello. */
  peerId: string | undefined;
  lastHeartbeat = Date.now();
  alive = true;
  /** null: every type its scopes allow. */
  private subscriptions: Set<SubscriptionType> | null = null;
  /** The first event seq fanned out while this connection was open, and the subscriptions in force since. */
  private firstLiveSeq: string | undefined;
  private applied: Applied[] = [{ after: undefined, subscriptions: null }];
  private idleTimer: NodeJS.Timeout | undefined;
  dropping = false;
  lastSync: Partial<Record<SyncType, Record<string, unknown>>> = {};
  /** Peer links: when the last heartbeat ping was sent (ms). */
  pingSentAt = 0;
  /**
   * Peer links: everything this relay stored before this time (ms) is known to have reached the
   * peer: a pong answers a ping sent after it (TCP keeps order), unless a heal was still sending.
   */
  confirmedAt = 0;
  /** Peer links: a heal (events stored while the link was down) is being sent, or ended at this time. */
  healing = false;
  healEndedAt = 0;
  /** While a replay runs: live events held back. */
  private held: Held[] | undefined;
  /** Bytes of the held live events: they count, with the send buffer, against MAX_SEND_BUFFER_BYTES. */
  private heldBytes = 0;
  /** The last seq a replay sent: a live event at or before it was in the replay. */
  private replayedThrough: string | undefined;
  private seqAfter: ((a: string, b: string) => boolean) | undefined;
  private dropTimer: NodeJS.Timeout | undefined;
  private readonly deps: ConnectionDeps;

  constructor(ws: WebSocket, outbound: boolean, address: string, roles: ConnectionRoles, deps: ConnectionDeps, ip = address) {
    this.ws = ws;
    this.outbound = outbound;
    this.address = address;
    this.ip = ip;
    this.roles = roles;
    this.deps = deps;
    ws.on('pong', () => {
      this.alive = true;
      this.lastHeartbeat = Date.now();
      if (!this.healing && this.healEndedAt <= this.pingSentAt && this.pingSentAt > this.confirmedAt) this.confirmedAt = this.pingSentAt;
    });
    ws.once('close', () => {
      clearTimeout(this.dropTimer);
      clearTimeout(this.idleTimer);
    });
  }

  /** A client (no publish or mesh token): bound by the client message size (its handshake server) and rate limits. */
  get limited(): boolean {
    return !this.outbound && !this.roles.publisher && !this.roles.meshAllowed;
  }

  /**
   * An anonymous client is closed (1008) after `ms` unless it subscribed to at least one type by
   * then (docs/relay.md, "WebSocket limits"); 0: never.
   */
  closeWhenIdle(ms: number): void {
    if (ms <= 0 || this.roles.anonymous !== true) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (!this.isOpen) return;
      this.deps.logger.debug({ address: this.address }, 'closing an idle anonymous client');
      this.ws.close(1008, 'idle: subscribe to at least one type within IDLE_CLIENT_TIMEOUT_MS');
    }, ms);
    this.idleTimer.unref();
  }

  /**
   * Applies a subscription (null: everything its scopes allow) to the events fanned out after
   * `after`. An anonymous client that subscribes to nothing is closed after `idleMs` again.
   */
  subscribe(subscriptions: Set<SubscriptionType> | null, after: string | undefined, idleMs: number): void {
    this.subscriptions = subscriptions;
    this.applied.push({ after, subscriptions });
    if (this.applied.length > MAX_APPLIED) this.applied.shift();
    if (subscriptions === null || subscriptions.size > 0) clearTimeout(this.idleTimer);
    else this.closeWhenIdle(idleMs);
  }

  /** An event of `seq` is being fanned out (whether this connection wants it or not). */
  noteLive(seq: string): void {
    this.firstLiveSeq ??= seq;
  }

  /**
   * True when the event of `seq` and `type` was sent to this connection live, as far as it can
   * tell: fanned out while it was open, at or before `through` (the last seq fanned out before
   * its replay began), and wanted by the subscription in force then.
   */
  sentLive(seq: string, type: SubscriptionType, through: string | undefined, after: (a: string, b: string) => boolean): boolean {
    if (this.firstLiveSeq === undefined || through === undefined) return false;
    if (after(this.firstLiveSeq, seq) || after(seq, through)) return false;
    for (let i = this.applied.length - 1; i >= 0; i--) {
      const a = this.applied[i]!;
      if (a.after !== undefined && !after(seq, a.after)) continue;
      return (a.subscriptions === null || a.subscriptions.has(type)) && this.roles.scopes.has(scopeOf(type));
    }
    return false;
  }

  /** An accepted connection that is not a peer relay: gets client broadcasts. */
  get isClient(): boolean {
    return !this.outbound && this.peerId === undefined;
  }

  get isOpen(): boolean {
    return !this.dropping && this.ws.readyState === WebSocket.OPEN;
  }

  /** True when this client subscribed to `type` (or to everything) and its scopes allow it. */
  wants(type: SubscriptionType): boolean {
    if (this.subscriptions !== null && !this.subscriptions.has(type)) return false;
    return this.roles.scopes.has(scopeOf(type));
  }

  /** Sends one serialised message, or drops a consumer whose send buffer is over the bound. */
  send(frame: Buffer): boolean {
    if (!this.isOpen) return false;
    if (this.ws.bufferedAmount > this.deps.maxSendBufferBytes) {
      this.dropSlowConsumer();
      return false;
    }
    this.ws.send(frame, { binary: false });
    this.deps.counters.messages_sent++;
    return true;
  }

  /** Serialises and sends `message`. */
  sendMessage(message: object): boolean {
    return this.send(Buffer.from(JSON.stringify(message)));
  }

  /** Sends a live event, or holds it while a replay runs (sent after, unless the replay covered it). */
  sendLive(frame: Buffer, seq: string | undefined): boolean {
    if (seq !== undefined && this.replayedThrough !== undefined && !this.seqAfter!(seq, this.replayedThrough)) return false;
    if (this.held !== undefined && seq !== undefined) {
      if (!this.isOpen) return false;
      // Held events are data queued for this client too: a client that stops reading during a
      // replay is a slow consumer, not a list growing with every live event.
      if (this.heldBytes + frame.length + this.ws.bufferedAmount > this.deps.maxSendBufferBytes) {
        this.held = [];
        this.heldBytes = 0;
        this.dropSlowConsumer();
        return false;
      }
      this.held.push({ seq, frame });
      this.heldBytes += frame.length;
      return true;
    }
    return this.send(frame);
  }

  /** True while a replay runs. */
  get replaying(): boolean {
    return this.held !== undefined;
  }

  /** Starts holding live events (a replay is about to run). */
  holdLive(): void {
    if (this.held === undefined) this.heldBytes = 0;
    this.held ??= [];
  }

  /**
   * Ends a replay that reached `lastSeq`: sends the held live events that come after it (the
   * ones before were in the replay), in order, and goes back to sending live events at once.
   * `after(a, b)` is the log's order (true when seq `a` comes after `b`).
   */
  releaseHeld(lastSeq: string | undefined, after: (a: string, b: string) => boolean): number {
    const held = this.held ?? [];
    this.held = undefined;
    this.heldBytes = 0;
    if (lastSeq !== undefined) {
      this.replayedThrough = lastSeq;
      this.seqAfter = after;
    }
    let sent = 0;
    for (const h of held) {
      if (lastSeq !== undefined && !after(h.seq, lastSeq)) continue;
      if (this.send(h.frame)) sent++;
    }
    return sent;
  }

  /** Resolves once the send buffer is under `bytes` (or the connection is gone). */
  async drained(bytes: number): Promise<void> {
    while (this.isOpen && this.ws.bufferedAmount > bytes) await new Promise((r) => setTimeout(r, 5));
  }

  /** Closes a consumer that does not read what it is sent. */
  dropSlowConsumer(): void {
    this.dropping = true;
    this.deps.counters.slow_consumers_dropped++;
    this.deps.logger.warn(
      { address: this.address, buffered: this.ws.bufferedAmount, peer: this.peerId, token: this.roles.tokenName },
      'disconnecting slow consumer',
    );
    this.ws.close(1008, SLOW_CONSUMER_REASON);
    // The close frame waits behind the unread data: cut the connection if it is not read soon.
    this.dropTimer = setTimeout(() => this.ws.terminate(), this.deps.slowConsumerGraceMs);
  }

  /** Closes with 1001 and resolves once closed (terminated after 500 ms without a close handshake). */
  shutdown(): Promise<void> {
    const ws = this.ws;
    return new Promise<void>((resolve) => {
      if (ws.readyState === WebSocket.CLOSED) {
        resolve();
        return;
      }
      const timer = setTimeout(() => ws.terminate(), 500);
      ws.once('close', () => {
        clearTimeout(timer);
        clearTimeout(this.dropTimer);
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) ws.close(1001, 'relay shutting down');
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    });
  }
}
