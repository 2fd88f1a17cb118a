import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND } from '../src/command';

const MAIN = join(__dirname, '..', 'dist', 'main.js');
const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
const run = (...args: string[]) =>
  spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: { PATH: process.env.PATH ?? '' },
  });

// The entry point's command line (README, "Operations"), run as an operator would: the built dist/main.js.
describe('dist/main.js command line', () => {
  it('--help prints the usage and every environment variable with its default, exit 0', () => {
    const res = run('--help');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^storage \d+\.\d+\.\d+: /);
    expect(res.stdout).toContain('Usage:');
    for (const variable of COMMAND.env ?? []) expect(res.stdout).toContain(variable.name);
    expect(res.stdout).toMatch(/TRUST_PROXY\s+\(none\)/);
    expect(res.stdout).toMatch(/LOG_LEVEL\s+info/);
  });

  it('--version prints the package version, exit 0', () => {
    const res = run('--version');
    expect(res.status).toBe(0);
    expect(res.stdout).toBe(`${VERSION}\n`);
  });

  it('an unknown option is one line on stderr and exit 2', () => {
    const res = run('--no-such-option');
    expect(res.status).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe("storage: unknown option '--no-such-option' (see storage --help)\n");
  });
});
