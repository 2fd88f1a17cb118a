import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { processCpuMicros, processCpuTimes, threadCpuMicros } from '../src';

/** Spins until this process has used `micros` more CPU time. */
function busyFor(micros: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= micros) return;
  }
}

// Linux's /proc, as on every machine the project runs on (the services' images are Debian).
describe('processCpuMicros', () => {
  // The work is measured in CPU time (getrusage, through process.cpuUsage), never in wall time: on
  // a busy machine 100 ms of wall time may be 40 ms of CPU. /proc counts in ticks of 10 ms.
  it('reads the CPU time a process used so far, and it grows with work as getrusage sees it', () => {
    const usageBefore = process.cpuUsage();
    const before = processCpuMicros(process.pid);
    expect(before).toBeGreaterThan(0);
    busyFor(100_000);
    const grown = processCpuMicros(process.pid) - before;
    const usage = process.cpuUsage(usageBefore);
    expect(grown).toBeGreaterThanOrEqual(100_000 - 20_000);
    expect(grown).toBeLessThanOrEqual(usage.user + usage.system + 20_000);
  });

  it('reads a process whose command name holds ") " (the name is counted from its last parenthesis)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cpu-'));
    const odd = join(dir, 'a) b c');
    symlinkSync(process.execPath, odd);
    // Busy for 60 ms of its own CPU time, then says so and waits.
    const script = `while (process.cpuUsage().user + process.cpuUsage().system < 60000); console.log('busy'); setTimeout(() => {}, 20000)`;
    const child = spawn(odd, ['-e', script]);
    try {
      await new Promise((resolve) => child.stdout.once('data', resolve));
      const used = processCpuMicros(child.pid);
      expect(used).toBeGreaterThanOrEqual(60_000 - 10_000);
      expect(used).toBeLessThan(60_000_000);
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is NaN for no pid or a process that does not exist', () => {
    expect(processCpuMicros(undefined)).toBeNaN();
    expect(processCpuMicros(2 ** 22 + 1)).toBeNaN(); // above Linux's largest pid
  });
});

describe('processCpuTimes', () => {
  it("splits the process's CPU time into user and system time as getrusage does, their sum processCpuMicros'", () => {
    const usageBefore = process.cpuUsage();
    const before = processCpuTimes(process.pid);
    // User time: a loop in JavaScript. System time: system calls (a write of one byte to /dev/null, many times).
    busyFor(100_000);
    const sink = openSync('/dev/null', 'w');
    const kernelBefore = process.cpuUsage().system;
    try {
      while (process.cpuUsage().system - kernelBefore < 100_000) for (let i = 0; i < 1_000; i++) writeSync(sink, 'x');
    } finally {
      closeSync(sink);
    }
    const after = processCpuTimes(process.pid);
    const usage = process.cpuUsage(usageBefore);
    // /proc counts in ticks of 10 ms.
    expect(after.user - before.user).toBeGreaterThanOrEqual(usage.user - 30_000);
    expect(after.user - before.user).toBeLessThanOrEqual(usage.user + 30_000);
    expect(after.system - before.system).toBeGreaterThanOrEqual(Math.max(60_000, usage.system - 30_000));
    expect(after.system - before.system).toBeLessThanOrEqual(usage.system + 30_000);
    const total = processCpuMicros(process.pid);
    const split = processCpuTimes(process.pid);
    expect(Math.abs(split.user + split.system - total)).toBeLessThanOrEqual(20_000);
  });

  it('is NaN for no pid or a process that does not exist', () => {
    expect(processCpuTimes(undefined)).toEqual({ user: Number.NaN, system: Number.NaN });
    expect(processCpuTimes(2 ** 22 + 1)).toEqual({ user: Number.NaN, system: Number.NaN });
  });
});

describe('threadCpuMicros', () => {
  it('lists each live thread by id, the main thread under the pid, and finds the thread that did the work', async () => {
    const before = threadCpuMicros(process.pid);
    expect(before.get(process.pid)).toBeGreaterThan(0);
    // A worker busy until the process has used 200 ms more CPU (the main thread only waits), then
    // waiting until it is terminated (so its thread is still listed).
    const worker = new Worker(
      "const { parentPort } = require('node:worker_threads'); const start = process.cpuUsage(); const used = () => { const u = process.cpuUsage(start); return u.user + u.system; }; while (used() < 200000); parentPort.postMessage('done'); setInterval(() => {}, 1000);",
      { eval: true },
    );
    try {
      await new Promise((resolve) => worker.once('message', resolve));
      const after = threadCpuMicros(process.pid);
      const started = [...after].filter(([tid]) => !before.has(tid));
      expect(started.length).toBeGreaterThanOrEqual(1);
      // The worker's 200 ms are on a thread that did not exist before, not on the main thread.
      expect(Math.max(...started.map(([, micros]) => micros))).toBeGreaterThanOrEqual(100_000);
      expect((after.get(process.pid) ?? 0) - (before.get(process.pid) ?? 0)).toBeLessThan(150_000);
    } finally {
      await worker.terminate();
    }
  });

  it('is empty for no pid or a process that does not exist', () => {
    expect(threadCpuMicros(undefined).size).toBe(0);
    expect(threadCpuMicros(2 ** 22 + 1).size).toBe(0);
  });
});
