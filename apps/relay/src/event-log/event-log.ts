import type { ReplayCursor } from '@repo/relay-protocol';

/** One event as the log keeps it. */
export interface StoredEvent {
  /** Position in the log: increasing in storage order (compare with {@link seqAfter}). */
  seq: string;
  id: string;
  type: string;
  /** When this log stored it (ms since the epoch, the store's clock). */
  storedAt: number;
  /** The event's JSON text, sent as it is. */
  text: string;
}

/** The outcome of {@link EventLog.append}. */
export interface Appended {
  seq: string;
  fresh: boolean;
  /** Resolves once the event is on disk; rejects when it cannot be made durable. */
  durable: Promise<void>;
}

/** The oldest point a replay can start from (for REPLAY_UNAVAILABLE). */
export interface OldestPoint {
  oldest_id?: string;
  oldest_timestamp?: number;
}

/** Where a replay starts: after `after` (null: from the first event), or not possible. */
export type ReplayStart = { ok: true; after: string | null } | { ok: false; oldest: OldestPoint };

/**
 * The durable event log behind replay and healing (docs/relay.md, "Replay"): every event the
 * relay accepts is appended before it is acknowledged or delivered, and read back in storage order.
 */
export interface EventLog {
  readonly kind: 'sqlite' | 'redis';
  /**
   * Appends `event` (its JSON `text`) unless this relay stored its id before. Resolves once the
   * event is written and readable (`fresh` false for an id already there, a duplicate); `durable`
   * resolves once it has reached the disk (what an acknowledgement waits for).
   */
  append(event: { id: string; type: string; text: string }): Promise<Appended>;
  /** Resolves a `since` (an event id, or a time in ms) to where the replay starts. */
  locate(cursor: ReplayCursor): Promise<ReplayStart>;
  /** Up to `limit` events after `after` (null: from the oldest), in storage order. */
  readAfter(after: string | null, limit: number): Promise<StoredEvent[]>;
  /** Applies the retention (age and count); returns how many events were removed. */
  trim(now?: number): Promise<number>;
  /** Reads a small value kept with the log (the mesh's last-confirmed times). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /** Events kept in the log now (what a `since` replay can reach; the `relay_replay_backlog_events` metric). */
  count(): Promise<number>;
  close(): Promise<void>;
}

/** Retention of the log: events older than `maxAgeMs`, and past the newest `maxEvents`, are removed. */
export interface Retention {
  maxAgeMs: number;
  maxEvents: number;
}

/**
 * True when seq `a` comes after seq `b`. Seqs are decimal integers (SQLite) or Redis stream ids
 * `<ms>-<n>`: both compare part by part as numbers.
 */
export function seqAfter(a: string, b: string): boolean {
  const pa = a.split('-');
  const pb = b.split('-');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = BigInt(pa[i] ?? '0');
    const y = BigInt(pb[i] ?? '0');
    if (x !== y) return x > y;
  }
  return false;
}
