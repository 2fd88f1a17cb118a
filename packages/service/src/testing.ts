/**
 * Helpers for the apps' test suites (imported as `@repo/service/testing`, never by production
 * code): an app's entry point run as a process (until it exits: {@link runStart}; kept running:
 * {@link startService}), the user to run it as when file permissions are under test, and
 * temporary folders that go when a test file is done.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, it } from '@jest/globals';

/**
 * Temporary folders for one test file. Call it at the file's top level (it registers an
 * `afterAll` there); the function it returns makes a folder `<tmpdir>/<prefix>-XXXXXX`, removed
 * with everything in it once the file's tests are done.
 */
export function temporaryFolders(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    made.push(dir);
    return dir;
  };
}

/** A user and group for `spawn`. */
export interface ProcessUser {
  uid: number;
  gid: number;
}

/**
 * Whom to run a child as for a test of file permissions: permissions do not bind root, so as
 * root, nobody (65534), who can neither write root's 0444 files nor chmod root's files; as anyone
 * else, undefined (the child runs as this process's user).
 */
export function unprivilegedUser(): ProcessUser | undefined {
  return process.getuid?.() === 0 ? NOBODY : undefined;
}

const NOBODY: ProcessUser = { uid: 65_534, gid: 65_534 };

/**
 * Why a child run as nobody could not load the code in `folder` (default: the working directory),
 * or undefined when it can: the first folder above it that others may not enter (no `o+x`), as
 * when the clone sits in root's 0700 home. Only asked as root, where {@link unprivilegedUser} is nobody.
 */
export function unreachableByNobody(folder = process.cwd()): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (let dir = resolve(folder); ; dir = dirname(dir)) {
    const { mode, uid } = statSync(dir);
    if (uid !== NOBODY.uid && (mode & 0o001) === 0) {
      return `nobody (uid 65534) cannot enter ${dir} (mode ${(mode & 0o777).toString(8)}), so cannot load the code below it`;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * `it` for a test that must run its child as a user file permissions bind (root's runs as nobody,
 * {@link unprivilegedUser}). Where nobody cannot reach the code (a clone under a folder only root
 * may enter), the test is skipped with one line saying why and what would run it, instead of
 * failing on a module nobody cannot read.
 */
export function itAsUnprivileged(name: string, test: (user: ProcessUser | undefined) => Promise<void>, timeoutMs?: number): void {
  const why = unreachableByNobody();
  if (why === undefined) {
    it(name, () => test(unprivilegedUser()), timeoutMs);
    return;
  }
  console.warn(`skipped "${name}": ${why}; clone the repository where other users can enter, or run the tests as a user other than root`);
  it.skip(name, () => test(undefined));
}

/** Options of {@link runStart}. */
export interface StartOptions {
  /** The app's folder: `src/main.ts` is run from there. */
  cwd: string;
  /** The whole environment besides PATH: nothing from the developer's shell leaks in. */
  env: Record<string, string>;
  /** Run as this user (see {@link unprivilegedUser}). */
  user?: ProcessUser;
  /** A start that does not fail is stopped (SIGTERM) once its output contains this text. */
  listening: string;
  /** Killed (SIGKILL) and rejected after this long (default 120 s: a hang catcher only). */
  timeoutMs?: number;
}

/** What {@link runStart} saw. */
export interface StartRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr, as they came. */
  out: string;
  /** The fatal (level 60) log lines. */
  fatal: string[];
  /** Whether it logged `listening` (and was stopped then). */
  listened: boolean;
  /** Whether the output holds a stack trace (an `    at ` line): an operator never sees one. */
  stack: boolean;
}

/**
 * Runs an app's `src/main.ts` (through @repo/ts-register) until it exits, for the tests of what
 * a start prints and its exit status. A start that does not fail is stopped once it logs
 * `listening`, so the run also shows what a start that succeeds logged. (The command line,
 * `--help` and the like, is `@repo/config/testing`'s `runEntryPoint`, on the built
 * `dist/main.js`.)
 */
export function runStart(options: StartOptions): Promise<StartRun> {
  const child = spawn(process.execPath, ['-r', '@repo/ts-register', 'src/main.ts'], {
    cwd: options.cwd,
    ...options.user,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes(options.listening)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    // A hang catcher only: compiling src/ at start alone can take 15 s on a busy machine.
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`src/main.ts in ${options.cwd} neither failed nor listened within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        out,
        fatal: out.split('\n').filter((line) => line.includes('"level":60')),
        listened: out.includes(options.listening),
        stack: out.includes('    at '),
      });
    });
  });
}

/** A log line of a service (pino JSON; a line that is not JSON is kept as its `msg`). */
export type ServiceLog = Record<string, unknown> & { msg?: string; level?: number };

/** Options of {@link startService}. */
export interface ServiceOptions {
  /** Names the service in errors, and its temporary `DATA_DIR`. */
  name: string;
  /** The app's folder: its built `dist/main.js` is run from there (`npm run build` first). */
  appDir: string;
  /** The environment on top of PATH, HOST=127.0.0.1, LOG_LEVEL=info and a `DATA_DIR` of its own (each may be set here). */
  env: Record<string, string>;
  /** Started once a log line has this `msg` (the line: {@link ServiceProcess.readyLog}). */
  ready: string;
  /** Options of `node` itself, before the entry point (`--max-http-header-size=2048`). */
  nodeArgs?: string[];
  /** Run as this user (see {@link unprivilegedUser}). */
  user?: ProcessUser;
}

/** A service started as a real process from its built entry point. */
export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** The temporary `DATA_DIR` made for it (removed by `stop`). */
  dataDir: string;
  /** Its log lines so far. */
  logs: ServiceLog[];
  /** The line that said it was started (its `port`, for one started on port 0). */
  readyLog: ServiceLog;
  /** Resolves with the first log line matching `predicate` (already seen or to come). */
  waitForLog(predicate: (line: ServiceLog) => boolean, timeoutMs?: number): Promise<ServiceLog>;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s) and removes its `DATA_DIR`. Resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `<appDir>/dist/main.js` as operators run it, with `env` on top of a minimal environment
 * (nothing from the developer's shell), and resolves once it logs `ready`; rejects, with its last
 * log lines and its stderr, when it exits or stays silent first. Its output is always read, so it
 * never blocks on a full pipe.
 */
export async function startService(options: ServiceOptions): Promise<ServiceProcess> {
  const { name, appDir } = options;
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(appDir, 'dist', 'main.js')], {
    cwd: appDir,
    ...options.user,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: ServiceLog[] = [];
  const waiters: { predicate: (l: ServiceLog) => boolean; resolve: (l: ServiceLog) => void }[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() as string;
    for (const text of lines) {
      let line: ServiceLog;
      try {
        line = JSON.parse(text) as ServiceLog;
      } catch {
        line = { msg: text };
      }
      logs.push(line);
      for (const w of [...waiters]) {
        if (w.predicate(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // 'close': after the exit (by a code or a signal) and the end of its output, so every log line it wrote has been read.
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));

  const waitForLog = (predicate: (line: ServiceLog) => boolean, timeoutMs = 20_000): Promise<ServiceLog> => {
    const seen = logs.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`${name}: no matching log line within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
      waiters.push({
        predicate,
        resolve: (line) => {
          clearTimeout(timer);
          done(line);
        },
      });
      void exited.then((code) => {
        clearTimeout(timer);
        // The services log to stdout (pino): their last lines say why they stopped.
        const last = logs.slice(-5).map((l) => JSON.stringify(l));
        fail(new Error(`${name} exited (${code}) before logging what was expected; last log lines: ${last.join(' ')}; stderr: ${stderr}`));
      });
    });
  };
  const stop = async (): Promise<number | null> => {
    let code = child.exitCode;
    if (code === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      code = await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  let readyLog: ServiceLog;
  try {
    readyLog = await waitForLog((l) => l.msg === options.ready);
  } catch (err) {
    await stop();
    throw err;
  }
  return { name, child, dataDir, logs, readyLog, waitForLog, stop };
}
