import type { LogRecord } from '@repo/service';

/**
 * Resolves once `condition` holds, looking again after each turn of the event loop's timers (10
 * ms): for states that no event announces (a file's rows, a server's connection count). There is
 * no deadline: the test's own timeout catches a hang, so a busy machine only makes it slower.
 */
export async function eventually(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** The first line of `lines` (a memory logger's) from index `from` on that `matches`, now or when it is logged. */
export function logLine(lines: LogRecord[], matches: (line: LogRecord) => boolean, from = 0): Promise<LogRecord> {
  const found = lines.slice(from).find(matches);
  if (found !== undefined) return Promise.resolve(found);
  return new Promise((resolve) => {
    const push = lines.push.bind(lines);
    lines.push = (...items: LogRecord[]) => {
      const count = push(...items);
      const hit = items.find(matches);
      if (hit !== undefined) {
        lines.push = push;
        resolve(hit);
      }
      return count;
    };
  });
}
