import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeEntryPoint, runEntryPoint } from '@repo/config/testing';
import { COMMAND } from '../src/command';
import { loadConfig } from '../src/config';

// The entry point's command line (README, "Operations"), run as an operator would: the built dist/main.js.
// BIP352_SCAN_LANES is @repo/bip352's native scanner's own switch, read by it (README, "Configuration").
describeEntryPoint({
  name: 'silent-payments',
  appDir: join(__dirname, '..'),
  command: COMMAND,
  loadConfig,
  readElsewhere: ['BIP352_SCAN_LANES'],
});

const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('dist/cli.js command line', () => {
  const CLI = join(__dirname, '..', 'dist', 'cli.js');
  const cli = (...args: string[]) => runEntryPoint(CLI, args);

  it('--help, --version, and exit 2 with one line on an unknown option', () => {
    const help = cli('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('sign --psbt');
    expect(cli('--version').stdout).toBe(`${VERSION}\n`);
    const bad = cli('--bogus');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('error: unknown option "--bogus" (see --help)\n');
  });
});
