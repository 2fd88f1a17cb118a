/** The outcome of {@link StorageBackend.put}: written, or refused because a live value holds the key. */
export type PutResult = 'stored' | 'exists';

/** A live value and when it expires (ms since the epoch, null for never). */
export interface StoredEntry {
  value: string;
  expiresAt: number | null;
}

/**
 * Why a delete or a touch did not happen: `not_found` (no value, or it has expired),
 * `no_token` (the value was stored before write tokens and has none: it is immutable),
 * `forbidden` (the token does not match).
 */
export type WriteRefusal = 'not_found' | 'no_token' | 'forbidden';

/** The outcome of {@link StorageBackend.delete}. */
export type DeleteResult = 'deleted' | WriteRefusal;

/** The outcome of {@link StorageBackend.touch}: the new expiry, or why nothing changed. */
export type TouchResult = { expiresAt: number | null } | WriteRefusal;

/**
 * The contract every storage backend keeps (one test suite runs against each). Keys are 64
 * lower-case hex characters, values non-empty lower-case hex of even length: callers validate.
 * Times are milliseconds since the Unix epoch, passed in so tests can drive the clock.
 * A value stored at `now` with `ttlSeconds` t is visible while `now' < now + t*1000`.
 * `tokenHash` is the SHA-256 of a value's write token (32 bytes); the token itself never
 * reaches a backend (docs/storage.md, "Write tokens").
 */
export interface StorageBackend {
  /** `sqlite` or `redis`. */
  readonly name: string;
  /**
   * Stores `value` with its write-token hash under `key` unless a value that has not expired
   * at `now` is there (`exists`); an expired one is replaced. Resolves only once the write is
   * durable. `ttlSeconds` null: the value never expires. Rejects with BackendUnavailableError
   * when the backend cannot be reached.
   */
  put(key: string, value: string, ttlSeconds: number | null, now: number, tokenHash: Buffer): Promise<PutResult>;
  /** The value under `key` with its expiry, or undefined when there is none or it has expired at `now`. */
  get(key: string, now: number): Promise<StoredEntry | undefined>;
  /**
   * Deletes the value under `key` when it is live at `now` and its token hash equals
   * `tokenHash` (compared in constant time). Resolves once the delete is durable.
   */
  delete(key: string, tokenHash: Buffer, now: number): Promise<DeleteResult>;
  /**
   * Sets the expiry of the value under `key` to `now + ttlSeconds` (null: never), on the same
   * conditions as {@link delete}. Resolves once the change is durable.
   */
  touch(key: string, tokenHash: Buffer, ttlSeconds: number | null, now: number): Promise<TouchResult>;
  /** Deletes at most `batch` values expired at `now`; resolves with how many it deleted. */
  sweep(now: number, batch: number): Promise<number>;
  /** How many values are live at `now` (the `storage_keys` metric); absent where counting is not cheap (Redis). */
  count?(now: number): Promise<number>;
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
