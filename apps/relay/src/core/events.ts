import { assertMessage, createMessage, type Envelope, type EventType } from '@repo/relay-protocol';
import type { Connection } from '../connection';
import type { RelayState } from './state';

/**
 * An event from a publisher or a peer: validated, appended to the log, then acknowledged to a
 * publisher (only once durably stored, so a restart loses nothing acknowledged), then, the
 * first time its id is stored here, delivered to the clients and forwarded to the other peers.
 */
export function acceptEvent(state: RelayState, conn: Connection, message: Envelope): void {
  const { counters, seen } = state;
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
  const stored = state.log.append({ id: event.id, type, text });
  const failed = (err: Error) => {
    if (publisher) notStored(state, conn, event.id, fromPeer, err);
  };
  state.deliveries = state.deliveries
    .then(() => stored)
    .then(
      ({ seq, fresh, durable }) => {
        // Acknowledged only once on disk, so a restart (even a power cut) loses nothing acknowledged.
        durable.then(() => {
          // Only now may a resent copy be acknowledged from the seen-id set without the log.
          seen.add(event.id);
          if (publisher) conn.sendMessage(createMessage('ack', {}, event.id));
        }, failed);
        if (!fresh) {
          counters.duplicates_dropped++;
          return;
        }
        counters.events_stored++;
        if (event.type === 'BlockScanned' && event.data.block_height > state.lastBlockHeight)
          state.lastBlockHeight = event.data.block_height;
        state.fanOut.send(clean, { type, toPeers: true, fromPeer, seq, frame: Buffer.from(text) });
      },
      (err: Error) => notStored(state, conn, event.id, fromPeer, err),
    );
}

/** Not stored: not acknowledged. Closing makes the publisher reconnect and send it again. */
function notStored(state: RelayState, conn: Connection, id: string, fromPeer: string | undefined, err: Error): void {
  state.logger.error({ err: { message: err.message }, id, peer: fromPeer }, 'event log append failed: event not acknowledged');
  if (conn.isOpen) conn.ws.close(1011, 'event log unavailable');
}
