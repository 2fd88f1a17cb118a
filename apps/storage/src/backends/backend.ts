/** The outcome of {@link StorageBackend.put}: written, or refused because a live value holds the key. */
export type PutResult = 'stored' | 'exists';

/**
 * The contract every storage backend keeps (one test suite runs against each). Keys are 64
 * lower-case hex characters, values non-empty lower-case hex of even length: callers validate.
 * Times are milliseconds since the Unix epoch, passed in so tests can drive the clock.
 * A value stored at `now` with `ttlSeconds` t is visible while `now' < now + t*1000`.
 */
export interface StorageBackend {
  /** `sqlite` or `redis`. */
  readonly name: string;
  /**
   * Stores `value` under `key` unless a value that has not expired at `now` is there
   * (`exists`); an expired one is replaced. Resolves only once the write is durable.
   * `ttlSeconds` null: the value never expires. Rejects with BackendUnavailableError when the
   * backend cannot be reached.
   */
  put(key: string, value: string, ttlSeconds: number | null, now: number): Promise<PutResult>;
  /** The value under `key`, or undefined when there is none or it has expired at `now`. */
  get(key: string, now: number): Promise<string | undefined>;
  /** Deletes at most `batch` values expired at `now`; resolves with how many it deleted. */
  sweep(now: number, batch: number): Promise<number>;
  /** Throws when the backend cannot serve requests (for the health answer). */
  ping(): Promise<void>;
  /** Finishes pending writes and releases the backend. Idempotent. */
  close(): Promise<void>;
}

/** The backend cannot be reached (Redis down, connection lost): answered 503, never a crash. */
export class BackendUnavailableError extends Error {
  override readonly name = 'BackendUnavailableError';
}

/** The instant a value stored at `now` with `ttlSeconds` expires, or null for never. */
export function expiresAt(now: number, ttlSeconds: number | null): number | null {
  return ttlSeconds === null ? null : now + ttlSeconds * 1000;
}
