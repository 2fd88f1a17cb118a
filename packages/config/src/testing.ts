import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { CommandSpec } from './cli';

/** Options of {@link describeEntryPoint}. */
export interface EntryPointOptions {
  /** The program's name as its help and errors print it (the app's name). */
  name: string;
  /** The app's folder (its package.json gives the version; its dist/main.js is run). */
  appDir: string;
  /** The app's command table: every environment variable must appear in `--help`. */
  command: CommandSpec;
}

/** Runs a built entry point as an operator would: a clean environment, a time limit. */
export function runEntryPoint(file: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [file, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: { PATH: process.env.PATH ?? '' },
  });
}

/**
 * The jest suite every app's `dist/main.js` must pass (docs/README.md, "Command line"): `--help`
 * prints the usage and every environment variable with its default, `--version` the package
 * version, and an unknown option is one line on stderr and exit status 2.
 */
export function describeEntryPoint(options: EntryPointOptions): void {
  const { name, appDir, command } = options;
  const main = join(appDir, 'dist', 'main.js');
  const version = (JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')) as { version: string }).version;

  describe('dist/main.js command line', () => {
    it('--help prints the usage and every environment variable with its default, exit 0', () => {
      const res = runEntryPoint(main, ['--help']);
      expect(res.status).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`^${name} \\d+\\.\\d+\\.\\d+: `));
      expect(res.stdout).toContain('Usage:');
      for (const variable of command.env ?? []) expect(res.stdout).toContain(variable.name);
      expect(res.stdout).toMatch(/TRUST_PROXY\s+\(none\)/);
      expect(res.stdout).toMatch(/LOG_LEVEL\s+info/);
    });

    it('--version prints the package version, exit 0', () => {
      const res = runEntryPoint(main, ['--version']);
      expect(res.status).toBe(0);
      expect(res.stdout).toBe(`${version}\n`);
    });

    it('an unknown option is one line on stderr and exit 2', () => {
      const res = runEntryPoint(main, ['--no-such-option']);
      expect(res.status).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe(`${name}: unknown option '--no-such-option' (see ${name} --help)\n`);
    });
  });
}
