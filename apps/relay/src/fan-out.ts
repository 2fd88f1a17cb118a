import type { Envelope, SubscriptionType } from '@repo/relay-protocol';
import type { Connection } from './connection';
import type { Mesh } from './mesh';

/** Where {@link FanOut.send} delivers a message. */
export interface FanOutTarget {
  /** The message's type, matched against each client's subscription and scopes. */
  type: SubscriptionType;
  /** Forward to peer relays too (events and this relay's own sync messages). */
  toPeers: boolean;
  /** The peer the message came from: never sent back over that link. */
  fromPeer?: string;
  /** The event's position in the log: clients being replayed to hold it until their replay ends. */
  seq?: string;
  /** The message already serialised. */
  frame?: Buffer;
}

/** Sends a message to the relay's clients and peers in one pass over the connections. */
export interface FanOut {
  /** Returns how many connections it was sent to. */
  send(message: Envelope<object>, target: FanOutTarget): number;
  /** An `error` message to every client (whatever they subscribed to). */
  errorToClients(message: Envelope<object>): void;
  /** The seq of the last event fanned out (undefined before the first). */
  readonly lastSeq: string | undefined;
}

/**
 * Creates the fan-out: the message is serialised once, then each client that wants its type gets
 * it and each peer relay gets it over one link (the one {@link Mesh.linkOf} prefers), except the
 * peer it came from. De-duplication is the caller's: the fan-out sends what it is given.
 */
export function createFanOut(connections: ReadonlySet<Connection>, mesh: Pick<Mesh, 'linkOf'>): FanOut {
  let lastSeq: string | undefined;
  return {
    get lastSeq() {
      return lastSeq;
    },
    send(message, target) {
      let frame: Buffer | undefined = target.frame;
      let count = 0;
      const seq = target.seq;
      if (seq !== undefined) lastSeq = seq;
      for (const conn of connections) {
        if (conn.isClient) {
          if (seq !== undefined) conn.noteLive(seq);
          if (!conn.wants(target.type)) continue;
          frame ??= Buffer.from(JSON.stringify(message));
          if (conn.sendLive(frame, target.seq)) count++;
        } else if (target.toPeers && conn.peerId !== undefined && conn.peerId !== target.fromPeer && mesh.linkOf(conn.peerId) === conn) {
          frame ??= Buffer.from(JSON.stringify(message));
          if (conn.send(frame)) count++;
        }
      }
      return count;
    },
    errorToClients(message) {
      const frame = Buffer.from(JSON.stringify(message));
      for (const conn of connections) if (conn.isClient) conn.send(frame);
    },
  };
}
