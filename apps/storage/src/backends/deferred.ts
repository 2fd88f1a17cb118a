import { openLater } from '@repo/service';
import { BackendUnavailableError, type StorageBackend } from './backend';

/** A backend built now and opened later: the app opens it in `start()`, never in `createApp`. */
export interface DeferredBackend extends StorageBackend {
  /** Opens the backend (the SQLite file, the Redis connection); once; rejects as the opening does. */
  open(): Promise<void>;
}

/**
 * Wraps the opening of a backend so that the service can be built around it before anything is
 * opened: a call before `open()` has resolved rejects with BackendUnavailableError (a 503, as a
 * backend that is down); `close()` closes what was opened (nothing when `open()` never ran or
 * failed) and is idempotent. `countable`: whether the backend counts its values (SQLite), since
 * the metrics look for `count` before the backend is open.
 */
export function deferBackend(name: string, countable: boolean, opening: () => StorageBackend | Promise<StorageBackend>): DeferredBackend {
  const backend = openLater(
    opening,
    (closed) => new BackendUnavailableError(closed ? 'the backend is closed' : 'the backend is not open yet'),
  );
  return {
    name,
    open: () => backend.open(),
    put: async (key, value, ttlSeconds, now, tokenHash) => backend.current().put(key, value, ttlSeconds, now, tokenHash),
    get: async (key, now) => backend.current().get(key, now),
    delete: async (key, tokenHash, now) => backend.current().delete(key, tokenHash, now),
    touch: async (key, tokenHash, ttlSeconds, now) => backend.current().touch(key, tokenHash, ttlSeconds, now),
    sweep: async (now, batch) => backend.current().sweep(now, batch),
    ...(countable && { count: async (now: number) => (await backend.current().count?.(now)) ?? 0 }),
    ping: async () => backend.current().ping(),
    close: () => backend.close(),
  };
}
