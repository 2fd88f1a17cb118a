import { openLater } from '@repo/service';
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
  const log = openLater(opening, (closed) => new Error(closed ? 'event log is closed' : 'event log is not open'));
  return {
    kind,
    open: () => log.open(),
    append: async (event) => log.current().append(event),
    locate: async (cursor) => log.current().locate(cursor),
    readAfter: async (after, limit) => log.current().readAfter(after, limit),
    trim: async (now) => log.current().trim(now),
    getMeta: async (key) => log.current().getMeta(key),
    setMeta: async (key, value) => log.current().setMeta(key, value),
    count: async () => log.current().count(),
    close: () => log.close(),
  };
}
