/** Writes one log line: `logger.warn` or `logger.info` bound to its logger. */
export type LogWrite = (fields: Record<string, unknown>, message: string) => void;

/** Options of {@link throttledLog}. */
export interface ThrottleOptions {
  /** At most one line in this long (ms). */
  everyMs: number;
  /** The field of a line that counts the calls it stands for (`refusals`, `errors`). */
  countAs: string;
}

/**
 * A log line for something that can happen many times a second (a refused connection, a bad
 * request, a lost Redis connection), written at most once every `everyMs`: a line that goes out
 * carries in `countAs` how many calls it stands for, itself and those held back since the line
 * before, so a flood is one line a period that says how big it was, never a flood of lines.
 */
export function throttledLog(write: LogWrite, options: ThrottleOptions): LogWrite {
  let last = -Infinity;
  let held = 0;
  return (fields, message) => {
    held++;
    const now = Date.now();
    if (now - last < options.everyMs) return;
    last = now;
    write({ ...fields, [options.countAs]: held }, message);
    held = 0;
  };
}
