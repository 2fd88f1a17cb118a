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
  let backend: StorageBackend | undefined;
  let opened: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  const current = (): StorageBackend => {
    if (backend === undefined)
      throw new BackendUnavailableError(closed === undefined ? 'the backend is not open yet' : 'the backend is closed');
    return backend;
  };
  return {
    name,
    open() {
      opened ??= (async () => {
        if (closed !== undefined) throw new Error('the backend is closed');
        const ready = await opening();
        // Closed while it was opening (a stop signal during start): close what came too late.
        if (closed !== undefined) await ready.close();
        else backend = ready;
      })();
      return opened;
    },
    put: async (key, value, ttlSeconds, now, tokenHash) => current().put(key, value, ttlSeconds, now, tokenHash),
    get: async (key, now) => current().get(key, now),
    delete: async (key, tokenHash, now) => current().delete(key, tokenHash, now),
    touch: async (key, tokenHash, ttlSeconds, now) => current().touch(key, tokenHash, ttlSeconds, now),
    sweep: async (now, batch) => current().sweep(now, batch),
    ...(countable && { count: async (now: number) => (await current().count?.(now)) ?? 0 }),
    ping: async () => current().ping(),
    close() {
      closed ??= (async () => {
        await opened?.catch(() => undefined);
        const open = backend;
        backend = undefined;
        await open?.close();
      })();
      return closed;
    },
  };
}
