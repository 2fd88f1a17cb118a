import { accessSync, constants, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

/** The one environment variable that points the real-node tests at Bitcoin Core's daemon. */
export const BITCOIND_ENV = 'BITCOIND';

/** The major version of Bitcoin Core the real-node suites are written against. */
export const BITCOIND_MAJOR = 29;

/** Where the daemon was found, and how (`env`: BITCOIND, `path`: bitcoind on PATH). */
export interface FoundBitcoind {
  path: string;
  source: 'env' | 'path';
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The repository root: the nearest folder at or above `from` holding `pnpm-workspace.yaml`
 * (turbo runs each package's script in the package's folder); `from` itself when there is none.
 */
export function repositoryRoot(from: string = process.cwd()): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (dirname(dir) === dir) return resolve(from);
  }
}

/**
 * Finds bitcoind: `BITCOIND` (a path; relative to the repository root when not absolute)
 * when set, else `bitcoind` on `PATH`. Throws when `BITCOIND` is set but names no executable
 * file (a misconfigured CI must fail, not skip); undefined when neither gives one.
 */
export function findBitcoind(env: NodeJS.ProcessEnv = process.env): FoundBitcoind | undefined {
  const configured = env[BITCOIND_ENV];
  if (configured !== undefined && configured !== '') {
    const path = isAbsolute(configured) ? configured : resolve(repositoryRoot(), configured);
    if (!isExecutableFile(path)) throw new Error(`${BITCOIND_ENV}=${configured}: no executable file there`);
    return { path, source: 'env' };
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, 'bitcoind');
    if (isExecutableFile(path)) return { path, source: 'path' };
  }
  return undefined;
}

/**
 * `bitcoind -version`'s version (`29.2.0`), or undefined when it cannot be run.
 *
 * Bitcoin Core reads and rewrites `settings.json` in its data directory even for `-version`
 * (`$HOME/.bitcoin` by default, created when missing). Two gates asking at once (turbo starts
 * the real-node suites side by side) then race on `settings.json.tmp` and one of them fails with
 * "Settings file could not be written". Each call therefore gets a data directory of its own,
 * removed afterwards: the answer does not depend on what else runs, and the user's home is left
 * alone.
 */
export function bitcoindVersion(path: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let datadir: string;
  try {
    datadir = mkdtempSync(join(tmpdir(), 'bitcoind-version-'));
  } catch {
    return undefined; // no temporary folder to give it: the version cannot be asked safely
  }
  try {
    const out = spawnSync(path, [`-datadir=${datadir}`, '-version'], { encoding: 'utf8', timeout: 10_000, env });
    const match = /version v?(\d+\.\d+(?:\.\d+)?)/.exec(out.stdout ?? '');
    return match?.[1];
  } finally {
    rmSync(datadir, { recursive: true, force: true });
  }
}

/** The path of bitcoind for a test suite; throws with the gate's explanation when there is none. */
export function requireBitcoind(env: NodeJS.ProcessEnv = process.env): string {
  const found = findBitcoind(env);
  if (found === undefined) throw new Error(notRunMessage('this suite'));
  return found.path;
}

/** The one line the gate prints when the real-node suite cannot run. */
export function notRunMessage(pkg: string, why = `it needs Bitcoin Core ${BITCOIND_MAJOR}.x`): string {
  return `${pkg}: real-node suite not run: ${why}; set ${BITCOIND_ENV}=/path/to/bitcoind or put bitcoind on PATH`;
}
