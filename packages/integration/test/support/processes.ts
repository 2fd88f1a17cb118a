import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
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
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s). Resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Binds `port` (0: one the OS picks) on the loopback and releases it: the port, or undefined when it is taken. */
function probePort(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      server.close(() => done(address.port));
    });
  });
}

/** The first port of the OS's ephemeral range (Linux: ip_local_port_range; 32768 elsewhere, its default there). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Lowest port {@link freePort} draws from. */
const DRAW_FROM = 15_000;

/**
 * A TCP port free on the loopback now, for a service started later. It is drawn below the OS's
 * ephemeral range: a port the OS picked (listen(0)) could be handed out again, before the service
 * binds it, as the source port of a connection another test process opens (the suites run side by
 * side), and the service would then fail to start with EADDRINUSE. Falls back to a port the OS
 * picks when none of 50 draws is free.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 50 && low > DRAW_FROM + 1; attempt++) {
    const port = await probePort(DRAW_FROM + Math.floor(Math.random() * (low - DRAW_FROM)));
    if (port !== undefined) return port;
  }
  const port = await probePort(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
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
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
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
