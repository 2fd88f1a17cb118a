import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { itAsUnprivileged } from '@repo/service/testing';
import { createSqliteBackend, type StorageBackendName } from '../src';
import { useBackend } from './support/redis-server';
import {
  deleteJson,
  getJson,
  postJson,
  randomKey,
  randomValue,
  startService,
  storeValue,
  tempDirEachTest,
  testConfig,
} from './support/service';

const APP_DIR = join(__dirname, '..');

/** The service's own entry point, run by plain node in a child process. */
interface ChildService {
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];

afterEach(() => {
  // A failed test must not leave its child running.
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function spawnMain(env: Record<string, string>, args: string[] = [], user?: { uid: number; gid: number }): ChildService {
  const child = spawn(process.execPath, ['-r', '@repo/ts-register', 'src/main.ts', ...args], {
    cwd: APP_DIR,
    ...user,
    // Only what the test sets: nothing from the developer's shell (REDIS_URL, PORT…) leaks in.
    env: { PATH: process.env.PATH ?? '', PORT: '0', RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_PER_SECOND: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  let partial = '';
  // Always drained, so the child never blocks on a full pipe.
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts.filter((l) => l !== ''));
  });
  child.stderr?.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited };
}

/**
 * Resolves with the port once the child logs that it listens; rejects if it exits first. No
 * deadline of its own: a child that neither listens nor exits is caught by the test's timeout.
 */
async function listeningPort(service: ChildService): Promise<number> {
  let done = false;
  service.exited.then(() => (done = true)).catch(() => undefined);
  for (;;) {
    const line = service.lines.find((l) => l.includes('"storage listening"'));
    if (line !== undefined) return (JSON.parse(line) as { port: number }).port;
    if (done) throw new Error(`the service did not start:\n${service.lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const BACKENDS: StorageBackendName[] = ['sqlite', 'redis'];

describe.each(BACKENDS)('crash of the %s service (SIGKILL)', (backendName) => {
  const backendEnv = useBackend(backendName);
  const tempDir = tempDirEachTest();

  it('keeps every acknowledged store when killed while clients store', async () => {
    const env: Record<string, string> = {
      DATA_DIR: tempDir(),
      LOG_LEVEL: 'info',
      ...backendEnv(),
    };
    const service = spawnMain(env);
    const base = `http://127.0.0.1:${await listeningPort(service)}`;
    const acknowledged: { key: string; value: string }[] = [];
    let killed = false;

    // 16 clients store without pause; the process is killed once 400 stores were answered 200,
    // so stores are in flight (received, batched, committing) at the moment of the kill.
    const client = async () => {
      for (;;) {
        const entry = { key: randomKey(), value: randomValue(64) };
        try {
          const res = await postJson(`${base}/store`, entry);
          if (res.status === 200) acknowledged.push(entry);
        } catch {
          return; // the connection died with the process
        }
        if (!killed && acknowledged.length >= 400) {
          killed = true;
          service.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(acknowledged.length).toBeGreaterThanOrEqual(400);

    const running = await startService(testConfig(env));
    try {
      const missing: string[] = [];
      for (let i = 0; i < acknowledged.length; i += 32) {
        await Promise.all(
          acknowledged.slice(i, i + 32).map(async ({ key, value }) => {
            const res = await getJson(`${running.base}/retrieve/${key}`);
            if (res.status !== 200 || res.body.value !== value) missing.push(key);
          }),
        );
      }
      expect(missing).toEqual([]);
    } finally {
      await running.close();
    }
  });
  it('keeps every acknowledged delete deleted when killed while clients delete', async () => {
    const env: Record<string, string> = { DATA_DIR: tempDir(), LOG_LEVEL: 'info', ...backendEnv() };
    const service = spawnMain(env);
    const base = `http://127.0.0.1:${await listeningPort(service)}`;
    const entries: { key: string; value: string; token: string }[] = [];
    for (let i = 0; i < 800; i += 32) {
      entries.push(
        ...(await Promise.all(
          Array.from({ length: 32 }, async () => {
            const entry = { key: randomKey(), value: randomValue(32) };
            return { ...entry, token: await storeValue(base, entry.key, entry.value) };
          }),
        )),
      );
    }
    const deleted: string[] = [];
    let next = 0;
    let killed = false;

    // 16 clients delete stored values without pause; the process is killed once 300 deletes
    // were answered 200, so deletes are in flight (received, batched, committing) at that moment.
    const client = async () => {
      for (;;) {
        const entry = entries[next++];
        if (entry === undefined) return;
        try {
          const res = await deleteJson(`${base}/storage/${entry.key}`, entry.token);
          if (res.status === 200) deleted.push(entry.key);
        } catch {
          return; // the connection died with the process
        }
        if (!killed && deleted.length >= 300) {
          killed = true;
          service.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(deleted.length).toBeGreaterThanOrEqual(300);
    const untouched = entries.slice(next);
    expect(untouched.length).toBeGreaterThan(0);

    const running = await startService(testConfig(env));
    try {
      const resurrected: string[] = [];
      for (let i = 0; i < deleted.length; i += 32) {
        await Promise.all(
          deleted.slice(i, i + 32).map(async (key) => {
            if ((await getJson(`${running.base}/retrieve/${key}`)).status !== 404) resurrected.push(key);
          }),
        );
      }
      expect(resurrected).toEqual([]);
      // The values no delete was sent for are all still there.
      const lost: string[] = [];
      for (const { key, value } of untouched) {
        const res = await getJson(`${running.base}/retrieve/${key}`);
        if (res.status !== 200 || res.body.value !== value) lost.push(key);
      }
      expect(lost).toEqual([]);
    } finally {
      await running.close();
    }
  });
});

describe('main', () => {
  const tempDir = tempDirEachTest();

  it('runs with --permanent, serves, and exits 0 on SIGTERM', async () => {
    const service = spawnMain({ DATA_DIR: tempDir(), LOG_LEVEL: 'info' }, ['--permanent']);
    const base = `http://127.0.0.1:${await listeningPort(service)}`;
    const health = await getJson(`${base}/health`);
    expect(health.body).toMatchObject({ status: 'healthy', permanent: true, backend: 'sqlite' });
    const stored = await postJson(`${base}/storage/store`, { key: randomKey(), value: 'abcd' });
    expect(stored).toMatchObject({ status: 200, body: { expires_at: null } });
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    const requestLines = service.lines.filter((l) => l.includes('"msg":"request"'));
    expect(requestLines).toHaveLength(2);
    expect(service.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });

  it('exits 1 with one line naming the variable when a setting is wrong', async () => {
    const service = spawnMain({ DATA_DIR: tempDir(), STORAGE_BACKEND: 'mysql' });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.lines).toHaveLength(1);
    expect(service.lines[0]).toContain('STORAGE_BACKEND');
    expect(service.lines[0]).not.toContain('    at ');
  });

  it('exits 1 with one line when Redis cannot be reached', async () => {
    const service = spawnMain({
      DATA_DIR: tempDir(),
      STORAGE_BACKEND: 'redis',
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_CONNECT_TIMEOUT_MS: '300',
    });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    const fatal = service.lines.filter((l) => l.includes('"level":60'));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toContain('cannot connect to Redis');
  });

  it('exits 1 with one line naming the file when the SQLite file cannot be opened', async () => {
    const notADir = join(tempDir(), 'file');
    writeFileSync(notADir, '');
    const service = spawnMain({ DATA_DIR: notADir });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    const fatal = service.lines.filter((l) => l.includes('"level":60'));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toContain(`cannot open the SQLite file ${join(notADir, 'storage.sqlite')} (DATA_DIR)`);
    expect(service.lines.join('\n')).not.toContain('    at ');
  });

  // As root, the child runs as nobody (unprivilegedUser), who cannot write root's 0444 file.
  itAsUnprivileged(
    'exits 1 with one line saying the SQLite file is read-only, instead of serving and failing every write',
    async (user) => {
      const dir = tempDir();
      const file = join(dir, 'storage.sqlite');
      await createSqliteBackend({ file }).close();
      chmodSync(file, 0o444);
      chmodSync(dir, 0o777);
      const service = spawnMain({ DATA_DIR: dir }, [], user);
      const exited = await Promise.race([service.exited, listeningPort(service).then(() => 'listening' as const)]);
      expect(exited).toEqual({ code: 1, signal: null });
      const fatal = service.lines.filter((l) => l.includes('"level":60'));
      expect(fatal).toHaveLength(1);
      expect(fatal[0]).toContain(`cannot open the SQLite file ${file} (DATA_DIR): it can be read but not written by this process`);
      expect(service.lines.join('\n')).not.toContain('    at ');
    },
  );
});
