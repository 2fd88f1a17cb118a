import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// The package's commands (README), built: `npm run vectors` and `npm run bench` run these files.
describe.each(['run-vectors', 'bench'])('dist/cli/%s.js command line', (name) => {
  const file = join(__dirname, '..', 'dist', 'cli', `${name}.js`);
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  const command = name === 'bench' ? 'bip352-bench' : 'bip352-vectors';

  it('--help prints usage and variables with defaults; --version the version', () => {
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain(`${command} `);
    expect(help.stdout).toContain('Usage:');
    expect(help.stdout).toMatch(name === 'bench' ? /BENCH_ROUND_MS\s+150/ : /--backend <name>/);
    expect(run('--version').stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('an unknown option is one line on stderr and exit 2', () => {
    const res = run('--bogus');
    expect(res.status).toBe(2);
    expect(res.stderr).toBe(`${command}: unknown option '--bogus' (see ${command} --help)\n`);
  });
});
