/**
 * A resource built now and opened later (a database file, a connection): an app's `createApp`
 * wires its services around one without opening anything, and `start()` opens it.
 */
export interface OpenLater<T extends { close(): Promise<void> }> {
  /** Opens the resource; once (later calls share the first); rejects as the opening does, or when already closed. */
  open(): Promise<void>;
  /** The open resource. @throws the `notOpen` error before `open()` has resolved, or after `close()`. */
  current(): T;
  /** Closes what was opened (nothing when `open()` never ran or failed); idempotent. */
  close(): Promise<void>;
}

/**
 * Wraps `opening` so that it runs on `open()`, not before. `notOpen(closed)` makes the error a
 * call gets before the resource is open (`closed` false) or after it was closed (`closed` true).
 * A resource that finishes opening after `close()` was called (a stop signal during start) is
 * closed at once.
 */
export function openLater<T extends { close(): Promise<void> }>(
  opening: () => T | Promise<T>,
  notOpen: (closed: boolean) => Error,
): OpenLater<T> {
  let resource: T | undefined;
  let opened: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  return {
    open() {
      opened ??= (async () => {
        if (closed !== undefined) throw notOpen(true);
        const ready = await opening();
        if (closed !== undefined) await ready.close();
        else resource = ready;
      })();
      return opened;
    },
    current() {
      if (resource === undefined) throw notOpen(closed !== undefined);
      return resource;
    },
    close() {
      closed ??= (async () => {
        await opened?.catch(() => undefined);
        const open = resource;
        resource = undefined;
        await open?.close();
      })();
      return closed;
    },
  };
}
