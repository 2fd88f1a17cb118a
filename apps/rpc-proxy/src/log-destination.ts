import pino from 'pino';
import type { Logger } from '@repo/http';

/** What {@link useAsyncLogDestination} returns: the destination, to flush or end it. */
export interface AsyncLogDestination {
  flushSync(): void;
  /** Writes what is buffered, then closes the descriptor ('close' event). */
  end(): void;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Makes `logger` (from `createLogger` of @repo/http, which writes each line to stdout with a
 * synchronous write) write through an asynchronous pino destination on `fd` instead: lines
 * logged while a write is in flight are buffered and written together, so the required
 * request line costs no system call of its own under load. Lines left in the buffer are
 * flushed at exit by the exit hook pino registers for its destinations.
 * Uses pino's public `pino.symbols.streamSym`; once `createLogger` takes a destination
 * itself, this helper goes away.
 */
export function useAsyncLogDestination(logger: Logger, fd = 1): AsyncLogDestination {
  const stream = pino.destination({ dest: fd, sync: false });
  (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = stream;
  return stream;
}
