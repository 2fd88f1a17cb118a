import { splitSuccessReply, type CallState } from '@repo/json-rpc';
import { countKeys, scanBody, type BodyScan } from './body-scan';
import { NodeError, type NodeReply } from './node-client';

/**
 * In-flight request coalescing ("single flight", docs/rpc-proxy.md, "Coalescing"): while a read-only call is on its
 * way to the node, an identical call does not go to the node again; it waits for that reply
 * and gets the same result in its own envelope. Nothing is kept once the reply is in: this is
 * not a cache, and an answer is at most one in-flight round trip old.
 *
 * Byte-exactness: a follower must get exactly what the node would have answered to its own
 * request. The result is never re-serialized (Core writes amounts like `0.00001000`): its bytes
 * are cut out of the leader's reply between Core's known success prefix and tail
 * ({@link splitSuccessReply}) and wrapped with the follower's id and version. Requests whose
 * meaning could differ between Core's parser and JSON.parse are never merged
 * ({@link scanCoalescable}).
 */

/** What a follower gets from the flight it joined. */
export type FlightOutcome =
  /** The exact bytes of the leader's `result`. */
  | { kind: 'result'; result: Buffer }
  /** The node call failed (the follower would have met the same node): -32603 in its own envelope. */
  | { kind: 'error'; error: NodeError }
  /** The reply was not a plain success (an error reply, another status, an unexpected shape): forward your own request. */
  | { kind: 'forward' };

/** Counters of the coalescer (exposed on `ProxyApp.coalescer.stats`). */
export interface CoalesceStats {
  /** Flights started (calls sent to the node on behalf of a possible group). */
  flights: number;
  /** Calls that joined a flight instead of going to the node. */
  followers: number;
  /** Followers answered from the leader's result. */
  shared: number;
  /** Followers answered -32603 because the leader's node call failed. */
  sharedErrors: number;
  /** Followers that had to forward their own request (the leader's reply could not be shared). */
  fallbacks: number;
  /** Followers waiting now. */
  waiting: number;
}

/** Merges identical calls in flight; see the module comment. */
export interface Coalescer {
  /** Joins the flight of `key` when one is in the air: resolves with its outcome; undefined when there is none. */
  join(key: string): Promise<FlightOutcome> | undefined;
  /** Starts the flight of `key` for its leader (envelope state `state`), which {@link Coalescer.land} or {@link Coalescer.abort} ends. */
  lead(key: string, state: CallState): void;
  /** Ends the flight of `key` with the node's reply to its leader: followers that joined meanwhile get theirs, once the flight is gone. */
  land(key: string, reply: NodeReply): void;
  /** Ends the flight of `key` whose leader's call failed (`err`): followers get -32603 for a NodeError, else forward their own. */
  abort(key: string, err: unknown): void;
  /** Flights in the air now. */
  readonly inFlight: number;
  readonly stats: CoalesceStats;
}

interface Flight {
  state: CallState;
  waiters: ((outcome: FlightOutcome) => void)[] | undefined;
}

/** Creates an empty coalescer. */
export function createCoalescer(): Coalescer {
  const flights = new Map<string, Flight>();
  const stats: CoalesceStats = { flights: 0, followers: 0, shared: 0, sharedErrors: 0, fallbacks: 0, waiting: 0 };

  /** Ends the flight of `key`; its followers, if any, get `outcome(flight)` once it is gone. */
  function settle(key: string, outcome: (flight: Flight) => FlightOutcome): void {
    const flight = flights.get(key);
    if (flight === undefined) return;
    flights.delete(key);
    const waiters = flight.waiters;
    if (waiters === undefined) return;
    const o = outcome(flight);
    stats.waiting -= waiters.length;
    if (o.kind === 'result') stats.shared += waiters.length;
    else if (o.kind === 'error') stats.sharedErrors += waiters.length;
    else stats.fallbacks += waiters.length;
    for (const w of waiters) w(o);
  }

  return {
    join(key) {
      const flight = flights.get(key);
      if (flight === undefined) return undefined;
      stats.followers++;
      stats.waiting++;
      return new Promise((resolve) => (flight.waiters ??= []).push(resolve));
    },
    lead(key, state) {
      flights.set(key, { state, waiters: undefined });
      stats.flights++;
    },
    land(key, reply) {
      settle(key, (flight) => {
        const result = reply.status === 200 ? splitSuccessReply(reply.body, flight.state) : undefined;
        return result === undefined ? { kind: 'forward' } : { kind: 'result', result };
      });
    },
    abort(key, err) {
      settle(key, () => (err instanceof NodeError ? { kind: 'error', error: err } : { kind: 'forward' }));
    },
    get inFlight() {
      return flights.size;
    },
    stats,
  };
}

/**
 * JSON text of `value` with object keys sorted (arrays keep their order), so that two
 * parameter sets that mean the same to Core give the same text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    out += `${i > 0 ? ',' : ''}${JSON.stringify(k)}:${canonicalJson(record[k])}`;
  }
  return `${out}}`;
}

/**
 * Whether a request body can be merged with another that JSON.parse reads the same: true
 * when nothing in it could make Core read it differently from JSON.parse ({@link scanBody}:
 * printable ASCII only, safe integers written canonically) and no key is repeated in an
 * object (JSON.parse keeps the last, Core the first). `parsed` is JSON.parse of the same bytes.
 */
export function scanCoalescable(raw: Buffer, parsed: unknown, scan: BodyScan = scanBody(raw)): boolean {
  return scan.plain && scan.keys === countKeys(parsed);
}

/**
 * Whether a request's id is echoed by Core exactly as `successText` writes it: absent, null,
 * a boolean, a safe integer (its text checked by {@link scanCoalescable}) or a printable ASCII
 * string. Objects and arrays are not (JSON.stringify moves integer-like keys first; Core keeps
 * the order), nor strings with control characters (escaping rules differ).
 */
export function echoableId(state: CallState): boolean {
  if (state.id === undefined) return true;
  const id = state.id.value;
  if (id === null || typeof id === 'boolean') return true;
  if (typeof id === 'number') return Number.isSafeInteger(id);
  return typeof id === 'string' && /^[\x20-\x7e]*$/.test(id);
}
