import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc gives CPU times in these ticks. */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time (user + system, µs) process `pid` has used so far, every thread included (those
 * that ended too), from `/proc/<pid>/stat`; NaN where it cannot be read (no /proc, no such
 * process, no pid). The benchmarks measure the processes they run with it: a server, bitcoind.
 */
export function processCpuMicros(pid: number | undefined): number {
  return totalOf(processCpuTimes(pid));
}

/** A process's or thread's CPU time so far, µs: in its own code (user) and in the kernel for it (system). */
export interface CpuTimes {
  user: number;
  system: number;
}

/**
 * The CPU time process `pid` has used so far, split into user and system time (µs), every
 * thread included, from `/proc/<pid>/stat`; NaN for both where it cannot be read. The rpc-proxy's
 * bench tells with it whether a server's cost a call is its own code or the kernel's (system
 * calls, the loopback's TCP, waking its peers).
 */
export function processCpuTimes(pid: number | undefined): CpuTimes {
  if (pid === undefined) return { user: Number.NaN, system: Number.NaN };
  try {
    return cpuTimesOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** utime and stime (fields 14 and 15) of a `stat` file, in µs. */
function cpuTimesOf(stat: string): CpuTimes {
  // The command name, field 2, is in parentheses and may itself hold ") ": count from the last one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1e6) / TICKS_PER_SECOND, system: (Number(fields[12]) * 1e6) / TICKS_PER_SECOND };
}

/** User and system time together. */
function totalOf({ user, system }: CpuTimes): number {
  return user + system;
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
      threads.set(Number(tid), totalOf(cpuTimesOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return threads;
}
