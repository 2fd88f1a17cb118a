import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createMemoryLogger, listen } from '@repo/service';
import { startTcpForwarder, type TcpForwarder } from '@repo/http/testing';
import { startRedis, type RedisHandle } from '@repo/redis/testing';
import { createApp, type StorageApp } from '../src';
import { BackendUnavailableError } from '../src/backends/backend';
import { createRedisBackend, MAX_QUEUED_COMMANDS } from '../src/backends/redis';
import { contract } from './support/contract';
import { getJson, makeTempDir, postJson, randomKey, removeDir, testConfig } from './support/service';
import { eventually, logLine } from './support/wait';

/** The Redis URL through `forwarder`. */
function redisUrlVia(forwarder: TcpForwarder): string {
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(forwarder.port);
  return url.toString();
}
let redisUrl = '';

/** The longest REDIS_COMMAND_TIMEOUT_MS: far past every test's own timeout. */
const NO_TIMEOUT_MS = 600_000;

// docs/storage.md, "Failures": while Redis is unreachable, requests answer 503 at once
// and the client reconnects in the background. The logs say so without a stack trace per request.
describe('Redis unreachable under load, then back', () => {
  let redis: RedisHandle;
  let forwarder: TcpForwarder;
  let service: StorageApp;
  let base: string;
  let dir: string;
  const prefix = `storage-test:${randomBytes(6).toString('hex')}:`;
  const memory = createMemoryLogger('info');

  beforeAll(async () => {
    redis = await startRedis();
    redisUrl = redis.url;
    const url = new URL(redis.url);
    forwarder = await startTcpForwarder({ host: url.hostname, port: Number(url.port || 6379) });
    dir = makeTempDir();
    // A command timeout longer than any test here: an answer that came from it would time the test out.
    service = createApp(
      testConfig({
        DATA_DIR: dir,
        STORAGE_BACKEND: 'redis',
        REDIS_URL: redisUrlVia(forwarder),
        REDIS_KEY_PREFIX: prefix,
        REDIS_COMMAND_TIMEOUT_MS: String(NO_TIMEOUT_MS),
      }),
      {
        logger: memory.logger,
      },
    );
    await service.start();
    contract.attach(service.servers.http);
    base = `http://127.0.0.1:${(await listen(service.servers.http, 0, '127.0.0.1')).port}`;
  });

  afterAll(async () => {
    await service?.close();
    await forwarder?.close();
    await redis?.cleanup(prefix);
    await redis?.stop();
    removeDir(dir);
  });

  it('answers 503 once a command waited REDIS_COMMAND_TIMEOUT_MS while Redis hangs, and serves again once it resumes', async () => {
    const hung = createApp(
      testConfig({
        DATA_DIR: dir,
        STORAGE_BACKEND: 'redis',
        REDIS_URL: redisUrlVia(forwarder),
        REDIS_KEY_PREFIX: prefix,
        REDIS_COMMAND_TIMEOUT_MS: '300',
      }),
      { logger: createMemoryLogger('info').logger },
    );
    await hung.start();
    const at = `http://127.0.0.1:${(await listen(hung.servers.http, 0, '127.0.0.1')).port}`;
    try {
      const key = randomKey();
      expect((await postJson(`${at}/store`, { key, value: 'abcd' })).status).toBe(200);
      forwarder.pause();
      const unavailable = { error: 'service temporarily unavailable', code: 'SERVICE_UNAVAILABLE', details: 'storage backend unavailable' };
      const [store, read] = await Promise.all([
        postJson(`${at}/store`, { key: randomKey(), value: 'abcd' }),
        getJson(`${at}/retrieve/${key}`),
      ]);
      // REQUEST_TIMEOUT_MS is 30 s here: the answer is the command timeout's.
      expect(store).toEqual({ status: 503, body: unavailable });
      expect(read).toEqual({ status: 503, body: unavailable });
      forwarder.resume();
      // The late replies are matched to the commands that timed out, not to the next ones.
      expect(await getJson(`${at}/retrieve/${key}`)).toMatchObject({ status: 200, body: { value: 'abcd' } });
    } finally {
      forwarder.resume();
      await hung.close();
    }
  });

  it('bounds the commands waiting for a hung Redis: past MAX_QUEUED_COMMANDS the next fails at once, and all the waiting ones are answered once it resumes', async () => {
    const backend = await createRedisBackend({ url: redisUrlVia(forwarder), keyPrefix: prefix, commandTimeoutMs: NO_TIMEOUT_MS });
    try {
      const key = randomKey();
      expect(await backend.get(key, Date.now())).toBeUndefined(); // the script is cached: one command a read
      forwarder.pause();
      const waiting = Array.from({ length: MAX_QUEUED_COMMANDS }, () => backend.get(key, Date.now()));
      // At once: the command timeout is longer than this test's, so only the full queue can refuse it.
      const refused = await backend.get(key, Date.now()).then(
        () => new Error('answered'),
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(BackendUnavailableError);
      expect(((refused as Error).cause as Error).message).toBe('The queue is full');
      forwarder.resume();
      const answers = await Promise.allSettled(waiting);
      expect(answers.filter((a) => a.status === 'fulfilled' && a.value === undefined)).toHaveLength(MAX_QUEUED_COMMANDS);
      expect(await backend.get(key, Date.now())).toBeUndefined();
    } finally {
      forwarder.resume();
      await backend.close();
    }
  }, 60_000);

  it('answers 503 at once while Redis is gone, logs it in a few lines without stacks, and serves again once it is back', async () => {
    const before = randomKey();
    expect((await postJson(`${base}/store`, { key: before, value: 'abcd' })).status).toBe(200);

    await forwarder.down();
    const linesBefore = memory.lines.length;
    // At once: the service's command timeout is longer than this test's, so every 503 below comes
    // from the client seeing the connection gone, however slow the machine.
    const answers = await Promise.all(Array.from({ length: 200 }, () => postJson(`${base}/store`, { key: randomKey(), value: 'abcd' })));
    const reads = await Promise.all(Array.from({ length: 50 }, () => getJson(`${base}/retrieve/${before}`)));
    for (const a of [...answers, ...reads]) {
      expect(a).toEqual({
        status: 503,
        body: { error: 'service temporarily unavailable', code: 'SERVICE_UNAVAILABLE', details: 'storage backend unavailable' },
      });
    }
    expect((await getJson(`${base}/health`)).status).toBe(503);

    const outage = memory.lines.slice(linesBefore).filter((l) => l.msg !== 'request');
    // No stack trace per request: a few lines for the whole outage, none at error level.
    expect(outage.filter((l) => l.level >= 50)).toEqual([]);
    expect(outage.length).toBeLessThanOrEqual(5);
    expect(JSON.stringify(outage)).not.toContain('    at ');
    expect(outage.some((l) => l.msg === 'answering 503: service unavailable' && l.kind === 'storage backend unavailable')).toBe(true);
    // Every request still has its own line, with its status.
    expect(memory.lines.slice(linesBefore).filter((l) => l.msg === 'request' && l.status === 503).length).toBeGreaterThanOrEqual(250);

    const restored = logLine(memory.lines, (l) => l.msg === 'redis connection restored', linesBefore);
    await forwarder.up();
    await restored;
    expect((await postJson(`${base}/store`, { key: randomKey(), value: 'abcd' })).status).toBe(200);
    expect(await getJson(`${base}/retrieve/${before}`)).toMatchObject({ status: 200, body: { value: 'abcd' } });
  }, 120_000);
});

// docs/storage.md, "Failures": 408 when a request is not answered within REQUEST_TIMEOUT_MS. A Redis that
// hangs (a stopped process, a saturated host) makes the handler finish after that answer: its own
// answer has nowhere to go and must not end as a raw stack trace on stderr.
describe('Redis hanging past REQUEST_TIMEOUT_MS (the real entry point)', () => {
  let redis: RedisHandle;
  let forwarder: TcpForwarder;
  const prefix = `storage-test:${randomBytes(6).toString('hex')}:`;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    const url = new URL(redis.url);
    forwarder = await startTcpForwarder({ host: url.hostname, port: Number(url.port || 6379) });
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await forwarder?.close();
    await redis?.cleanup(prefix);
    await redis?.stop();
  });

  it('answers 408, then logs the late outcome as one JSON line, never a stack trace', async () => {
    const url = new URL(redis.url);
    url.hostname = '127.0.0.1';
    url.port = String(forwarder.port);
    const dir = makeTempDir();
    const child = spawn(process.execPath, ['-r', '@repo/ts-register', 'src/main.ts'], {
      cwd: join(__dirname, '..'),
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        DATA_DIR: dir,
        STORAGE_BACKEND: 'redis',
        REDIS_URL: url.toString(),
        REDIS_KEY_PREFIX: prefix,
        REQUEST_TIMEOUT_MS: '500',
        // Past any wait here: the store must still complete once Redis resumes, however late.
        REDIS_COMMAND_TIMEOUT_MS: String(NO_TIMEOUT_MS),
        RATE_LIMIT_PER_MINUTE: '0',
        RATE_LIMIT_PER_SECOND: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    // Resolves with the "listening" line once it is written, or with undefined if the child exits first.
    const listeningLine = new Promise<string | undefined>((resolve) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const line = output.split('\n').find((l) => l.includes('"storage listening"'));
        if (line !== undefined) resolve(line);
      });
      child.once('exit', () => resolve(undefined));
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const listening = await listeningLine;
      if (listening === undefined) throw new Error(`the service did not start:\n${output}`);
      const base = `http://127.0.0.1:${(JSON.parse(listening) as { port: number }).port}`;
      expect((await postJson(`${base}/store`, { key: randomKey(), value: 'abcd' })).status).toBe(200);

      forwarder.pause();
      const late = randomKey();
      const [store, read] = await Promise.all([
        postJson(`${base}/store`, { key: late, value: 'abcd' }),
        getJson(`${base}/retrieve/${late}`),
      ]);
      expect(store).toEqual({ status: 408, body: { error: 'request timeout', code: 'REQUEST_TIMEOUT' } });
      expect(read.status).toBe(408);
      forwarder.resume();
      // The store reaches Redis after its 408: the key now holds a value nobody has a token for.
      await eventually(async () => (await getJson(`${base}/retrieve/${late}`)).status === 200);
      expect((await postJson(`${base}/store`, { key: randomKey(), value: 'abcd' })).status).toBe(200);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = output.split('\n').filter((l) => l !== '');
      // Every line is a JSON log line; no stack trace anywhere.
      expect(lines.filter((l) => !l.startsWith('{'))).toEqual([]);
      expect(output).not.toContain('    at ');
      const dropped = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request finished after its answer was sent');
      expect(dropped).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ level: 40, method: 'POST', path: '/store', status: 408, outcome: 'completed' }),
          // The read ran before or after the store in Redis: found (completed) or not (error NOT_FOUND).
          expect.objectContaining({ level: 40, method: 'GET', status: 408 }),
        ]),
      );
    } finally {
      forwarder.resume();
      removeDir(dir);
    }
  }, 120_000);
});
