import { InvalidMessageError, createMessage, type Subscription } from '@repo/relay-protocol';
import type { Connection } from '../connection';
import { replayTo } from '../replay';
import { scopeOf } from '../scopes';
import type { RelayState } from './state';

/**
 * A client's `subscribe`: checks the scopes, applies the subscription to the events fanned out
 * from now on, and answers `subscribed`, or replays from `since` (docs/relay.md, "Replay").
 */
export function subscribe(state: RelayState, conn: Connection, subscription: Subscription, requestId: string): void {
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
  const types = subscription.types === undefined ? null : new Set(subscription.types);
  conn.subscribe(types, state.fanOut.lastSeq, state.limits.idleClientTimeoutMs);
  if (subscription.since === undefined) {
    conn.sendMessage(createMessage('subscribed', { types: subscription.types ?? 'all' }, requestId));
    return;
  }
  void replayTo(conn, subscription.since, requestId, subscription.types, state.replay);
}
