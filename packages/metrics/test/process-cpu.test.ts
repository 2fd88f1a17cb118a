import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { processCpuMicros, threadCpuMicros } from '../src';

// Linux's /proc, as on every machine the project runs on (the services' images are Debian).
describe('processCpuMicros', () => {
  it('reads the CPU time a process used so far, and it grows with work', () => {
    const before = processCpuMicros(process.pid);
    expect(before).toBeGreaterThan(0);
    const until = Date.now() + 100;
    while (Date.now() < until) {
      // busy for 100 ms
    }
    expect(processCpuMicros(process.pid) - before).toBeGreaterThanOrEqual(50_000);
  });

  it('reads a process whose command name holds ") " (the name is counted from its last parenthesis)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cpu-'));
    const odd = join(dir, 'a) b c');
    symlinkSync(process.execPath, odd);
    const child = spawn(odd, ['-e', 'const t = Date.now() + 60; while (Date.now() < t); setTimeout(() => {}, 5000)']);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const used = processCpuMicros(child.pid);
      expect(used).toBeGreaterThanOrEqual(10_000);
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

describe('threadCpuMicros', () => {
  it('lists each live thread by id, the main thread under the pid, and finds the thread that did the work', async () => {
    const before = threadCpuMicros(process.pid);
    expect(before.get(process.pid)).toBeGreaterThan(0);
    // A worker busy for 200 ms, then waiting until it is terminated (so its thread is still listed).
    const worker = new Worker(
      "const { parentPort } = require('node:worker_threads'); const t = Date.now() + 200; while (Date.now() < t); parentPort.postMessage('done'); setInterval(() => {}, 1000);",
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
