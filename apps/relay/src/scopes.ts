import { MESSAGES, type Scope, type SubscriptionType } from '@repo/relay-protocol';

/** Both scopes: publishers and peer relays receive everything. */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set<Scope>(['events', 'payments']);

/** The scope a client needs to receive `type` (from the protocol's table). */
export function scopeOf(type: SubscriptionType): Scope {
  return MESSAGES[type].scope;
}
