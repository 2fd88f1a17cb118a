import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processCpuMicros } from '../src';

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
