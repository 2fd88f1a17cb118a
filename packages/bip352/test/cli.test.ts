import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// The package's commands (README): `npm run vectors` runs the built dist/cli/run-vectors.js,
// `npm run bench` runs bench/bench.ts from source (benchmarks are not shipped in dist).
describe.each(['run-vectors', 'bench'])('%s command line', (name) => {
  const args =
    name === 'bench'
      ? ['-r', '@repo/ts-register', join(__dirname, '..', 'bench', 'bench.ts')]
      : [join(__dirname, '..', 'dist', 'cli', `${name}.js`)];
  const run = (...extra: string[]) =>
    spawnSync(process.execPath, [...args, ...extra], {
      encoding: 'utf8',
      timeout: 20_000,
      killSignal: 'SIGKILL',
      cwd: join(__dirname, '..'),
    });
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
