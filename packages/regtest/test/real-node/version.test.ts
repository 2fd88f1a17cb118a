import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bitcoindVersion, requireBitcoind } from '../../src';

const GATE = join(__dirname, '..', '..', 'bin', 'regtest-gate.js');

/** Runs the gate with `true` as its command; resolves with its exit status and error output. */
function runGate(env: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GATE, 'true'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

describe('asking the real bitcoind its version', () => {
  const bitcoind = requireBitcoind();
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'gate-home-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('reads 29.x and leaves the default data directory ($HOME/.bitcoin) alone', () => {
    expect(bitcoindVersion(bitcoind, { ...process.env, HOME: home })).toMatch(/^29\.\d+/);
    expect(readdirSync(home)).toEqual([]);
  });

  it('answers every one of several gates started at once (they used to race on settings.json)', async () => {
    const env = { ...process.env, HOME: home, BITCOIND: bitcoind, npm_package_name: '@repo/example' };
    const runs = await Promise.all(Array.from({ length: 6 }, () => runGate(env)));
    expect(runs).toEqual(runs.map(() => ({ status: 0, stderr: '' })));
    expect(readdirSync(home)).toEqual([]);
  });
});
