import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import type { CommandSpec } from './cli';
import type { Env } from './env';

/** Options of {@link describeEntryPoint}. */
export interface EntryPointOptions {
  /** The program's name as its help and errors print it (the app's name). */
  name: string;
  /** The app's folder (its package.json gives the version; its dist/main.js is run). */
  appDir: string;
  /** The app's command table: every environment variable must appear in `--help`. */
  command: CommandSpec;
  /** The app's `loadConfig`: `--help` and the README's configuration table must name every variable it reads. */
  loadConfig: (env: Env) => unknown;
  /** Variables the README documents that something other than `loadConfig` reads (a native library's own switch). */
  readElsewhere?: readonly string[];
}

/**
 * The README's configuration tables (those whose header is `| variable | default | ...`): the
 * variables named in a row's first column, and the row's second (backticks removed).
 */
function readmeDefaults(readme: string): Map<string, string> {
  const rows = new Map<string, string>();
  let inTable = false;
  for (const line of readme.split('\n')) {
    const cells = line.startsWith('|') ? line.split('|').map((cell) => cell.trim()) : [];
    if (cells.length < 3) inTable = false;
    else if (cells[1] === 'variable' && cells[2] === 'default') inTable = true;
    else if (inTable) {
      for (const [, name] of cells[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) rows.set(name!, cells[2]!.replaceAll('`', ''));
    }
  }
  return rows;
}

/**
 * Each variable `--help` names, with the default it shows: a row naming two (`A, B`) with two
 * defaults (`500 / 30000`) gives each its own, otherwise both the row's.
 */
function helpDefaults(command: CommandSpec): (readonly [string, string])[] {
  return (command.env ?? []).flatMap((row) => {
    const names = row.name.split(/,\s*/);
    const defaults = row.default.split(' / ');
    return names.map((one, i) => [one, defaults.length === names.length ? defaults[i]! : row.default] as const);
  });
}

/**
 * Every variable `load` reads (an app's `loadConfig`, the shared readers included), found by
 * giving it an environment that records each lookup and holds nothing, so every default applies.
 */
export function variablesRead(load: (env: Env) => unknown): Set<string> {
  const read = new Set<string>();
  const env = new Proxy<Env>(
    {},
    {
      get(_target, name) {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
      has(_target, name) {
        if (typeof name === 'string') read.add(name);
        return false;
      },
    },
  );
  load(env);
  return read;
}

/** Runs a built entry point as an operator would: a clean environment, a time limit. */
export function runEntryPoint(file: string, args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [file, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: { PATH: process.env.PATH ?? '', ...env },
  });
}

/**
 * The jest suite every app's `dist/main.js` must pass (docs/README.md, "Command line"): `--help`
 * prints the usage and every environment variable with its default, exactly the variables the
 * app's `loadConfig` reads, each named in the README's configuration table with the same default;
 * `--version` prints the package version, and an unknown option is one line on stderr and exit
 * status 2.
 */
export function describeEntryPoint(options: EntryPointOptions): void {
  const { name, appDir, command, loadConfig, readElsewhere = [] } = options;
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

    it('--help and the README name every variable loadConfig reads, and the same default', () => {
      const read = [...variablesRead(loadConfig)].sort();
      const help = helpDefaults(command);
      expect(help.map(([one]) => one).sort()).toEqual(read);
      const readme = readmeDefaults(readFileSync(join(appDir, 'README.md'), 'utf8'));
      // No row for a variable nothing reads (a stale one).
      expect([...readme.keys()].filter((variable) => !read.includes(variable) && !readElsewhere.includes(variable))).toEqual([]);
      for (const [variable, shown] of help) {
        // The README's default column holds the first word `--help` shows ("65536 (64 KiB)" holds "65536").
        const documented = readme.get(variable);
        const first = shown.split(' ')[0]!;
        expect({ variable, documented: documented?.split(/\s+/).includes(first) ?? 'not in the README' }).toEqual({
          variable,
          documented: true,
        });
      }
    });

    it('each number or boolean --help shows as a default is the one loadConfig applies', () => {
      // Given explicitly, the default shown must leave the configuration as no value does.
      const applied = loadConfig({});
      const literal = /^(-?\d+|true|false)$/;
      const checked = helpDefaults(command).filter(([, shown]) => literal.test(shown.split(' ')[0]!));
      expect(checked.length).toBeGreaterThan(0);
      for (const [variable, shown] of checked) {
        const value = shown.split(' ')[0]!;
        expect({ variable, value, same: isDeepStrictEqual(loadConfig({ [variable]: value }), applied) }).toEqual({
          variable,
          value,
          same: true,
        });
      }
    });

    it('an unknown LOG_LEVEL stops the start with one line naming it, exit 1', () => {
      const res = runEntryPoint(main, [], { LOG_LEVEL: 'verbose' });
      expect(res.status).toBe(1);
      expect(res.stdout + res.stderr).toContain(
        'configuration error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      );
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
