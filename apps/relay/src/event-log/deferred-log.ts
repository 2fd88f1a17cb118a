import type { EventLog } from './event-log';

/** An event log built now and opened later: the relay's app opens it in `start()`, never in `createApp`. */
export interface DeferredEventLog extends EventLog {
  /** Opens the log (creates the SQLite file, connects to Redis); once; rejects as the opening does. */
  open(): Promise<void>;
}

/**
 * Wraps the opening of an event log so that the relay can be built around it before anything is
 * opened: every call before `open()` has resolved rejects with "event log is not open"; `close()`
 * closes what was opened (nothing when `open()` never ran or failed) and is idempotent.
 */
export function deferEventLog(kind: EventLog['kind'], opening: () => EventLog | Promise<EventLog>): DeferredEventLog {
  let log: EventLog | undefined;
  let opened: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  const current = (): EventLog => {
    if (log === undefined) throw new Error(closed === undefined ? 'event log is not open' : 'event log is closed');
    return log;
  };
  return {
    kind,
    open() {
      opened ??= (async () => {
        if (closed !== undefined) throw new Error('event log is closed');
        const ready = await opening();
        // Closed while it was opening (a stop signal during start): close what came too late.
        if (closed !== undefined) await ready.close();
        else log = ready;
      })();
      return opened;
    },
    append: async (event) => current().append(event),
    locate: async (cursor) => current().locate(cursor),
    readAfter: async (after, limit) => current().readAfter(after, limit),
    trim: async (now) => current().trim(now),
    getMeta: async (key) => current().getMeta(key),
    setMeta: async (key, value) => current().setMeta(key, value),
    count: async () => current().count(),
    close() {
      closed ??= (async () => {
        await opened?.catch(() => undefined);
        const open = log;
        log = undefined;
        await open?.close();
      })();
      return closed;
    },
  };
}
