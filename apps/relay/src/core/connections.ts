import type { RawData, WebSocket } from 'ws';
import { InvalidMessageError, SYNC_TYPES, createErrorMessage, createMessage, errorMessageOf, parseSubscribe } from '@repo/relay-protocol';
import { Connection, type ConnectionRoles } from '../connection';
import type { MeshOptions } from '../mesh';
import { healLink } from './healing';
import { ownSync, type RelayState } from './state';
import { subscribe } from './subscribe';
import { metricsChanged } from './timers';

/** Routes one message of a connection (the handlers of `handlers.ts`). */
export type MessageRouter = (conn: Connection, data: RawData, isBinary: boolean) => void;

/** Wraps a socket in a connection, routes its messages and forgets it once closed. */
export function track(
  state: RelayState,
  route: MessageRouter,
  ws: WebSocket,
  outbound: boolean,
  address: string,
  roles: ConnectionRoles,
  ip?: string,
): Connection {
  const deps = {
    maxSendBufferBytes: state.limits.maxSendBufferBytes,
    slowConsumerGraceMs: state.timing.slowConsumerGraceMs,
    counters: state.counters,
    logger: state.logger,
  };
  const conn = new Connection(ws, outbound, address, roles, deps, ip);
  ws.on('message', (data, isBinary) => route(conn, data, isBinary));
  if (outbound) ws.on('open', () => state.connections.add(conn));
  else state.connections.add(conn);
  ws.on('close', () => {
    state.connections.delete(conn);
    if (!outbound) state.mesh.unregister(conn, 'connection closed');
  });
  return conn;
}

/** The id of the `subscribed` reply (or the `error`) that answers `?since=` on the upgrade. */
export const UPGRADE_SUBSCRIBE_ID = 'since';

/**
 * `?since=<event id>` or `?since_time=<ms>` on the upgrade URL: the `data` of a `subscribe` with
 * `since` (and `types=<a,b>` when given), or undefined.
 */
export function upgradeSubscription(url: string): Record<string, unknown> | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const params = new URLSearchParams(url.slice(q + 1));
  const id = params.get('since');
  const time = params.get('since_time');
  if (id === null && time === null) return undefined;
  const types = params.get('types');
  return {
    since: id ?? (/^\d{1,16}$/.test(time!) ? Number(time) : time),
    ...(types !== null ? { types: types === '' ? [] : types.split(',') } : {}),
  };
}

/**
 * An accepted connection: counted by address, sent the relay's state, closed if it stays idle and
 * anonymous; with `?since=` on its URL, replayed to at once, before any live event, so it gets
 * every event once and in the log's order (docs/relay.md, "Replay").
 */
export function accept(state: RelayState, conn: Connection, url = '/'): void {
  const { logger, guard } = state;
  const { address, roles, ip } = conn;
  logger.debug({ address, token: roles.tokenName, scopes: [...roles.scopes], publisher: roles.publisher }, 'connection accepted');
  guard.opened(ip);
  conn.ws.once('close', () => guard.closed(ip));
  conn.ws.on('error', (err) => logger.debug({ address, err: err.message }, 'client connection error'));
  conn.closeWhenIdle(state.limits.idleClientTimeoutMs);
  // A new client learns the relay's state at once instead of waiting for the next period.
  conn.sendMessage(createMessage('StateSync', ownSync(state, 'StateSync')));
  const data = upgradeSubscription(url);
  if (data === undefined) return;
  try {
    subscribe(
      state,
      conn,
      parseSubscribe({ type: 'subscribe', id: UPGRADE_SUBSCRIBE_ID, timestamp: Date.now(), data }),
      UPGRADE_SUBSCRIBE_ID,
    );
  } catch (err) {
    if (!(err instanceof InvalidMessageError)) throw err;
    conn.sendMessage(errorMessageOf(err));
  }
}

/** Closes the client connections admitted by these token-file names (removed or changed tokens). */
export function revokeTokens(state: RelayState, names: string[]): void {
  const gone = new Set(names);
  for (const conn of state.connections) {
    if (conn.roles.tokenName === undefined || !gone.has(conn.roles.tokenName)) continue;
    state.logger.info({ token: conn.roles.tokenName, address: conn.address }, 'closing a connection whose token was removed');
    conn.ws.close(1008, 'token revoked');
  }
}

/** What the mesh tells the relay: links up and lost, and the reports of a `POST /sync`. */
export function peerEvents(state: RelayState): Pick<MeshOptions, 'onLinked' | 'onLost' | 'onSyncReport'> {
  return {
    onLinked(conn, isNew) {
      if (isNew) {
        metricsChanged(state);
        void healLink(state, conn);
      }
      // Exchange state at once, so /relays shows the peer's figures without waiting for the timer.
      for (const type of SYNC_TYPES) conn.sendMessage(createMessage(type, ownSync(state, type)));
      state.counters.last_sync_timestamp = Date.now();
    },
    onLost(peerId, conn, reason) {
      // CONNECTION_ERROR tells clients a relay became unreachable (docs/relay.md, "WebSocket errors").
      state.fanOut.errorToClients(
        createErrorMessage('CONNECTION_ERROR', `relay ${peerId} is unreachable`, `connection to ${conn.address} closed: ${reason}`),
      );
      metricsChanged(state);
    },
    onSyncReport(type, data) {
      // A manual sync is visible where it was asked for: the target's report goes to our clients.
      state.fanOut.send(createMessage(type, data as never), { type, toPeers: false });
    },
  };
}
