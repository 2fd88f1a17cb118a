import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc gives CPU times in these ticks. */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time (user + system, µs) process `pid` has used so far, every thread included (those
 * that ended too), from `/proc/<pid>/stat`; NaN where it cannot be read (no /proc, no such
 * process, no pid). The benchmarks measure the processes they run with it: a server, bitcoind.
 */
export function processCpuMicros(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    return cpuMicrosOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** utime + stime (fields 14 and 15) of a `stat` file, in µs. */
function cpuMicrosOf(stat: string): number {
  // The command name, field 2, is in parentheses and may itself hold ") ": count from the last one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

/**
 * The CPU time (user + system, µs) each live thread of process `pid` has used so far, by thread
 * id (the main thread's id is the pid), from `/proc/<pid>/task/<tid>/stat`; empty where it cannot
 * be read. A thread that has ended is no longer listed (its time stays in {@link processCpuMicros}),
 * so read it before the threads you measure end. The silent-payments catch-up bench splits its
 * service's CPU between the main thread, its scan workers and the rest with it.
 */
export function threadCpuMicros(pid: number | undefined): Map<number, number> {
  const threads = new Map<number, number>();
  if (pid === undefined) return threads;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      threads.set(Number(tid), cpuMicrosOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}
