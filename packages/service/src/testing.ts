/**
 * Helpers for the apps' test suites (imported as `@repo/service/testing`, never by production
 * code): an app's entry point run as a process, the user to run it as when file permissions are
 * under test, and temporary folders that go when a test file is done.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from '@jest/globals';

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
  return process.getuid?.() === 0 ? { uid: 65_534, gid: 65_534 } : undefined;
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
  /** Killed (SIGKILL) and rejected after this long (default 15 s). */
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
    const timeoutMs = options.timeoutMs ?? 15_000;
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
