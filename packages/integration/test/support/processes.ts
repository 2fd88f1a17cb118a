import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(__dirname, '..', '..', '..', '..');

/** A log line of a service (pino JSON). */
export type ServiceLog = Record<string, unknown> & { msg?: string; level?: number };

/** A service started as a real process from its built entry point. */
export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  dataDir: string;
  logs: ServiceLog[];
  /** Resolves with the first log line matching `predicate` (already seen or to come). */
  waitForLog(predicate: (line: ServiceLog) => boolean, timeoutMs?: number): Promise<ServiceLog>;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s) and removes its `DATA_DIR`. Resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `apps/<app>/dist/main.js` with `env` on top of a minimal environment (its own temporary
 * `DATA_DIR`, loopback only) and resolves once it logs `readyMessage`.
 */
export async function startService(name: string, app: string, env: Record<string, string>, readyMessage: string): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), `it-${name}-`));
  const child = spawn(process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js')], {
    cwd: join(ROOT, 'apps', app),
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: ServiceLog[] = [];
  const waiters: { predicate: (l: ServiceLog) => boolean; resolve: (l: ServiceLog) => void }[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
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
  // 'close': after the exit and the end of its output, so every log line it wrote has been read.
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));

  const service: ServiceProcess = {
    name,
    child,
    dataDir,
    logs,
    waitForLog(predicate, timeoutMs = 20_000) {
      const seen = logs.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((done, fail) => {
        const timer = setTimeout(
          () => fail(new Error(`${name}: no matching log line within ${timeoutMs} ms; stderr: ${stderr}`)),
          timeoutMs,
        );
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
          fail(
            new Error(`${name} exited (${code}) before logging what was expected; last log lines: ${last.join(' ')}; stderr: ${stderr}`),
          );
        });
      });
    },
    async stop() {
      let code = child.exitCode;
      if (code === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        code = await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
  await service.waitForLog((l) => l.msg === readyMessage);
  return service;
}

/** Polls `probe` every 100 ms until it returns a value that is not undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${lastError ? `: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}
