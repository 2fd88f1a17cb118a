import { readFileSync } from 'node:fs';

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
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, field 2, is in parentheses and may itself hold ") ": count from the last one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND; // utime, stime (fields 14, 15)
  } catch {
    return Number.NaN;
  }
}
