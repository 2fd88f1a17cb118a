import { WebSocket } from 'ws';
import type { Scope, SubscriptionType, SyncType } from '@repo/relay-protocol';
import type { Logger } from '@repo/service';
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

/**
 * One WebSocket connection (client, publisher or peer link) with its send buffer bound: before
 * each send the buffered amount is checked, and a consumer over the bound is closed with 1008
 * (RFC 6455 7.4.1, policy violation) and cut after a grace period if the close is not read.
 */
export class Connection {
  readonly ws: WebSocket;
  /** Dialled by us (a configured peer) or accepted. */
  readonly outbound: boolean;
  readonly roles: ConnectionRoles;
  readonly address: string;
  readonly connectedSince = Date.now();
  /** Set once the other side said hello. */
  peerId: string | undefined;
  lastHeartbeat = Date.now();
  alive = true;
  /** null: every type its scopes allow. */
  subscriptions: Set<SubscriptionType> | null = null;
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

  constructor(ws: WebSocket, outbound: boolean, address: string, roles: ConnectionRoles, deps: ConnectionDeps) {
    this.ws = ws;
    this.outbound = outbound;
    this.address = address;
    this.roles = roles;
    this.deps = deps;
    ws.on('pong', () => {
      this.alive = true;
      this.lastHeartbeat = Date.now();
      if (!this.healing && this.healEndedAt <= this.pingSentAt && this.pingSentAt > this.confirmedAt) this.confirmedAt = this.pingSentAt;
    });
    ws.once('close', () => clearTimeout(this.dropTimer));
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
