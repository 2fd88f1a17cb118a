import type { RawData } from 'ws';
import type { Logger } from '@repo/service';
import {
  InvalidMessageError,
  MESSAGES,
  SYNC_REQUEST_TYPES,
  SYNC_TYPES,
  createMessage,
  errorMessageOf,
  isMessageType,
  parseEnvelope,
  parseSubscribe,
  type DataOf,
  type Envelope,
  type Subscription,
  type SyncType,
} from '@repo/relay-protocol';
import type { Connection } from './connection';
import type { Mesh } from './mesh';
import type { MessageGuard } from './message-guard';
import type { RelayCounters } from './status';

const RELAY_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;

/** What the handlers need from the relay. */
export interface HandlerDeps {
  relayId: string;
  version: string;
  counters: RelayCounters;
  logger: Logger;
  mesh: Mesh;
  /** Rate and nesting bounds checked before a message is parsed. */
  guard: MessageGuard;
  /** The data of this relay's own sync message of `type`. */
  syncData: <T extends SyncType>(type: T) => DataOf<T>;
  statusReply: () => DataOf<'status'>;
  /** An event from a publisher or a peer (the caller checked the role). */
  onEvent: (conn: Connection, message: Envelope) => void;
  /** A client's `subscribe` (parsed); `requestId` is the command's id, for the reply. */
  onSubscribe: (conn: Connection, subscription: Subscription, requestId: string) => void;
}

/**
 * Creates the message handler of every connection: parses the frame with the protocol package,
 * then dispatches by the type's role in the table (event, sync, command, reply, peer) and by who
 * sent it (publisher, client, peer). An invalid message is answered with an `error` (never to an
 * outbound peer link: no ping-pong of errors between relays).
 */
export function createMessageHandler(deps: HandlerDeps): (conn: Connection, data: RawData, isBinary: boolean) => void {
  const { counters, logger, mesh, relayId, version } = deps;
  const isPeer = (conn: Connection) => conn.peerId !== undefined || conn.outbound;

  function command(conn: Connection, message: Envelope): void {
    switch (message.type) {
      case 'ping':
        conn.sendMessage(createMessage('pong', { relay_id: relayId }, message.id));
        return;
      case 'get_status':
        conn.sendMessage(createMessage('status', deps.statusReply(), message.id));
        return;
      case 'subscribe':
        deps.onSubscribe(conn, parseSubscribe(message), message.id);
        return;
    }
  }

  function hello(conn: Connection, message: Envelope): void {
    if (!conn.roles.meshAllowed) {
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
      conn.ws.close(1008, 'same relay_id');
      return;
    }
    if (!conn.outbound) conn.sendMessage(createMessage('hello', { relay_id: relayId, version }, message.id));
    mesh.register(conn, peerId);
  }

  function peerMessage(conn: Connection, message: Envelope): void {
    if (message.type === 'hello') return hello(conn, message);
    if (conn.peerId === undefined) {
      throw new InvalidMessageError(`${message.type} is a relay message`, 'say hello with the mesh token first', message.id);
    }
    if (message.type === 'sync_request') {
      const syncType = message.data.sync_type;
      if (typeof syncType !== 'string' || !(SYNC_REQUEST_TYPES as readonly string[]).includes(syncType)) {
        throw new InvalidMessageError('invalid field: data.sync_type', `expected one of ${SYNC_REQUEST_TYPES.join(', ')}`, message.id);
      }
      const types = syncType === 'all' ? [...SYNC_TYPES] : [syncType as SyncType];
      const messages = types.map((t) => createMessage(t, deps.syncData(t)));
      conn.sendMessage(createMessage('sync_response', { relay_id: relayId, sync_type: syncType, messages }, message.id));
      counters.last_sync_timestamp = Date.now();
      return;
    }
    mesh.onSyncResponse(conn, message.id, message.data.messages);
  }

  function dispatch(conn: Connection, message: Envelope): void {
    const type = message.type;
    const role = isMessageType(type) ? MESSAGES[type].role : undefined;
    switch (role) {
      case 'event':
        if (!isPeer(conn) && !conn.roles.publisher) {
          throw new InvalidMessageError(
            'publishing events needs the publisher token',
            'connect with Authorization: Bearer <RELAY_PUBLISH_TOKEN> to publish events',
            message.id,
          );
        }
        deps.onEvent(conn, message);
        return;
      case 'sync':
        if (!isPeer(conn)) {
          throw new InvalidMessageError(`${type} is a server message`, 'clients may send ping, get_status and subscribe', message.id);
        }
        conn.lastSync[type as SyncType] = message.data;
        counters.last_sync_timestamp = Date.now();
        return;
      case 'command':
        return command(conn, message);
      case 'peer':
        return peerMessage(conn, message);
      case 'reply':
        if (!isPeer(conn)) break;
        // Replies a peer sends to our own commands need nothing; its errors are counted.
        if (type === 'error') {
          counters.sync_errors++;
          logger.warn({ peer: conn.peerId, data: message.data }, 'peer relay reported an error');
        }
        return;
    }
    throw new InvalidMessageError(
      `unknown message type: ${type.slice(0, 64)}`,
      'clients may send ping, get_status and subscribe; publishers the events of the silent-payment service',
      message.id,
    );
  }

  /** False when the guard refused the message (answered, or the connection closed). */
  function admitted(conn: Connection, bytes: Buffer): boolean {
    const verdict = deps.guard.check(conn, bytes);
    if (verdict.ok) return true;
    counters.messages_rejected++;
    if (verdict.error !== undefined) throw verdict.error;
    return false;
  }

  return function handleMessage(conn, data, isBinary) {
    counters.messages_received++;
    if (conn.peerId !== undefined) conn.lastHeartbeat = Date.now();
    try {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (!admitted(conn, bytes)) return;
      if (isBinary) throw new InvalidMessageError('binary messages are not accepted', 'send JSON text frames');
      dispatch(conn, parseEnvelope(bytes.toString('utf8')));
    } catch (err) {
      if (!(err instanceof InvalidMessageError)) {
        logger.error({ err, address: conn.address }, 'message handling failed');
        return;
      }
      if (isPeer(conn)) {
        counters.sync_errors++;
        logger.warn({ peer: conn.peerId, address: conn.address, error: err.message }, 'invalid message from peer');
        if (conn.outbound) return;
      }
      conn.sendMessage(errorMessageOf(err));
    }
  };
}
