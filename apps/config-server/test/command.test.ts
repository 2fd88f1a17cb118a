import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeEntryPoint, runEntryPoint } from '@repo/config/testing';
import { COMMAND } from '../src/command';
import { loadConfig } from '../src/config';

// The entry point's command line (README, "Operations"), run as an operator would: the built dist/main.js.
describeEntryPoint({ name: 'config-server', appDir: join(__dirname, '..'), command: COMMAND, loadConfig });

const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('dist/cli.js (config-server-key) command line', () => {
  const CLI = join(__dirname, '..', 'dist', 'cli.js');
  const cli = (...args: string[]) => runEntryPoint(CLI, args);

  it('--help names the command and the variables the key comes from, --version the version', () => {
    const help = cli('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('config-server-key key <env>');
    for (const name of ['DATA_DIR', 'KEYS_DIR', 'CONFIG_MASTER_KEY']) expect(help.stdout).toContain(name);
    expect(cli('--version').stdout).toBe(`${VERSION}\n`);
  });

  it('an unknown option is one line on stderr and exit 2', () => {
    const res = cli('key', 'dev', '--bogus');
    expect(res.status).toBe(2);
    expect(res.stderr).toBe("config-server-key: unknown option '--bogus' (see config-server-key --help)\n");
  });
});
