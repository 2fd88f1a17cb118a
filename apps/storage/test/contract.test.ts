import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSilentLogger } from '@repo/http';
import { createBackend, DEFAULT_TTL_SECONDS, type StorageBackend, type StorageBackendName } from '../src';
import { useBackend } from './support/redis-server';
import {
  createTestClock,
  getJson,
  makeTempDir,
  postJson,
  randomKey,
  randomValue,
  removeDir,
  startService,
  testConfig,
  type RunningService,
  type TestClock,
} from './support/service';

interface InvalidStoreRequest {
  name: string;
  body: unknown;
  error: string;
}

const INVALID_STORE_REQUESTS: InvalidStoreRequest[] = JSON.parse(
  readFileSync(join(__dirname, 'fixtures', 'invalid-store-requests.json'), 'utf8'),
);

const BACKENDS: StorageBackendName[] = ['sqlite', 'redis'];
const PREFIXES = ['/storage', ''];
const SECOND = 1_000;

// One suite, both backends: every rule of the storage interface (docs/storage.md)
// as an HTTP request over a real socket, plus the backend contract itself.
describe.each(BACKENDS)('storage service on the %s backend', (backendName) => {
  const backendEnv = useBackend(backendName);
  let dir: string;
  let clock: TestClock;
  let running: RunningService;

  function env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATA_DIR: dir,
      ...backendEnv(),
      ...extra,
    };
  }

  async function restart(extra: Record<string, string> = {}): Promise<void> {
    await running.close();
    running = await startService(testConfig(env(extra)), clock.now);
  }

  beforeEach(async () => {
    dir = makeTempDir();
    clock = createTestClock();
    running = await startService(testConfig(env()), clock.now);
  });

  afterEach(async () => {
    await running?.close();
    removeDir(dir);
  });

  describe.each(PREFIXES)('POST %s/store', (prefix) => {
    it('stores a value and answers 200 with a message', async () => {
      const key = randomKey();
      const value = randomValue();
      const res = await postJson(`${running.base}${prefix}/store`, { key, value, ttl: 60 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'value stored', key, expires_at: new Date(clock.now() + 60 * SECOND).toISOString() });
      expect(await getJson(`${running.base}${prefix}/retrieve/${key}`)).toEqual({ status: 200, body: { key, value } });
    });

    it('answers 409 with an explicit message when the key exists and has not expired', async () => {
      const key = randomKey();
      const first = randomValue();
      expect((await postJson(`${running.base}${prefix}/store`, { key, value: first })).status).toBe(200);
      const second = await postJson(`${running.base}${prefix}/store`, { key, value: randomValue() });
      expect(second.status).toBe(409);
      expect(second.body).toEqual({ error: expect.stringContaining('key already exists'), code: 'CONFLICT' });
      expect((await getJson(`${running.base}${prefix}/retrieve/${key}`)).body.value).toBe(first);
    });
  });

  describe('POST /store', () => {
    it.each(INVALID_STORE_REQUESTS)('answers 400 for $name', async ({ body, error }) => {
      const res = await postJson(`${running.base}/storage/store`, JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.stringContaining(error), code: 'INVALID_REQUEST' });
    });

    it('answers 400 for a malformed JSON body', async () => {
      const res = await postJson(`${running.base}/store`, '{"key": ');
      expect(res).toEqual({ status: 400, body: { error: 'malformed JSON body', code: 'INVALID_REQUEST' } });
    });

    it('answers 400 for a body that is not sent as JSON', async () => {
      const res = await postJson(`${running.base}/store`, JSON.stringify({ key: randomKey(), value: '00' }), 'text/plain');
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('Content-Type: application/json');
    });

    it('stores nothing when it answers 400', async () => {
      const key = randomKey();
      expect((await postJson(`${running.base}/store`, { key, value: 'abc' })).status).toBe(400);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
    });

    it('answers 413 for a body over MAX_BODY_BYTES and accepts one under it', async () => {
      await restart({ MAX_BODY_BYTES: '4096' });
      const key = randomKey();
      const big = await postJson(`${running.base}/store`, { key, value: randomValue(2_100) });
      expect(big).toEqual({ status: 413, body: { error: 'request body too large', code: 'PAYLOAD_TOO_LARGE' } });
      expect((await postJson(`${running.base}/store`, { key, value: randomValue(1_900) })).status).toBe(200);
    });

    it('keeps a value of several megabytes intact', async () => {
      const key = randomKey();
      const value = randomValue(3 * 1024 * 1024);
      expect((await postJson(`${running.base}/store`, { key, value })).status).toBe(200);
      const res = await getJson(`${running.base}/retrieve/${key}`);
      expect(res.body.value === value).toBe(true);
    });

    it('normalises the key and the value to lower case', async () => {
      const key = randomKey();
      const value = randomValue();
      const stored = await postJson(`${running.base}/store`, { key: key.toUpperCase(), value: value.toUpperCase() });
      expect(stored.status).toBe(200);
      expect(stored.body.key).toBe(key);
      expect(await getJson(`${running.base}/retrieve/${key}`)).toEqual({ status: 200, body: { key, value } });
      expect(await getJson(`${running.base}/retrieve/${key.toUpperCase()}`)).toEqual({ status: 200, body: { key, value } });
      expect((await postJson(`${running.base}/store`, { key, value })).status).toBe(409);
    });

    it('gives exactly one of many concurrent stores of one key a 200, the others 409', async () => {
      const key = randomKey();
      const values = Array.from({ length: 24 }, () => randomValue());
      const results = await Promise.all(values.map((value) => postJson(`${running.base}/store`, { key, value })));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(values.length - 1);
      const winner = values[statuses.indexOf(200)];
      expect((await getJson(`${running.base}/retrieve/${key}`)).body.value).toBe(winner);
    });

    it('lets an expired key be stored again', async () => {
      const key = randomKey();
      expect((await postJson(`${running.base}/store`, { key, value: 'aa', ttl: 5 })).status).toBe(200);
      expect((await postJson(`${running.base}/store`, { key, value: 'bb', ttl: 5 })).status).toBe(409);
      clock.advance(5 * SECOND);
      expect((await postJson(`${running.base}/store`, { key, value: 'cc', ttl: 5 })).status).toBe(200);
      expect((await getJson(`${running.base}/retrieve/${key}`)).body.value).toBe('cc');
    });

    it('answers 405 to another method', async () => {
      const res = await getJson(`${running.base}/storage/store`);
      expect(res).toEqual({ status: 405, body: { error: expect.stringContaining('POST'), code: 'METHOD_NOT_ALLOWED' } });
    });
  });

  describe.each(PREFIXES)('GET %s/retrieve/:key', (prefix) => {
    it('answers 404 for an unknown key', async () => {
      const res = await getJson(`${running.base}${prefix}/retrieve/${randomKey()}`);
      expect(res).toEqual({ status: 404, body: { error: expect.stringContaining('key not found'), code: 'NOT_FOUND' } });
    });

    it.each([
      ['a short key', 'abcd', 'got length=4'],
      ['a long key', 'a'.repeat(66), 'got length=66'],
      ['a non-hex key', 'x'.repeat(64), 'only hex characters'],
    ])('answers 400 for %s', async (_name, key, error) => {
      const res = await getJson(`${running.base}${prefix}/retrieve/${key}`);
      expect(res).toEqual({ status: 400, body: { error: expect.stringContaining(error), code: 'INVALID_REQUEST' } });
    });
  });

  describe('time to live', () => {
    it('hides a value at once when its ttl has passed', async () => {
      const key = randomKey();
      expect((await postJson(`${running.base}/store`, { key, value: 'abcd', ttl: 10 })).status).toBe(200);
      clock.advance(10 * SECOND - 1);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(200);
      clock.advance(1);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
    });

    it(`keeps a value stored without ttl for ${DEFAULT_TTL_SECONDS} s`, async () => {
      const key = randomKey();
      const res = await postJson(`${running.base}/store`, { key, value: 'abcd' });
      expect(res.body.expires_at).toBe(new Date(clock.now() + DEFAULT_TTL_SECONDS * SECOND).toISOString());
      clock.advance(DEFAULT_TTL_SECONDS * SECOND - 1);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(200);
      clock.advance(1);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
    });

    it('keeps a value stored without ttl forever when STORAGE_PERMANENT is on, and still honours a ttl', async () => {
      await restart({ STORAGE_PERMANENT: 'true' });
      const forever = randomKey();
      const brief = randomKey();
      const res = await postJson(`${running.base}/store`, { key: forever, value: 'abcd' });
      expect(res.body.expires_at).toBeNull();
      expect((await postJson(`${running.base}/store`, { key: brief, value: 'abcd', ttl: 30 })).status).toBe(200);
      clock.advance(10 * 365 * 86_400 * SECOND);
      expect((await getJson(`${running.base}/retrieve/${forever}`)).status).toBe(200);
      expect((await getJson(`${running.base}/retrieve/${brief}`)).status).toBe(404);
      expect((await postJson(`${running.base}/store`, { key: forever, value: 'ef' })).status).toBe(409);
    });
  });

  describe('restart', () => {
    it('retrieves after a restart what was stored before it', async () => {
      const entries = Array.from({ length: 20 }, () => ({ key: randomKey(), value: randomValue() }));
      for (const entry of entries) expect((await postJson(`${running.base}/store`, entry)).status).toBe(200);
      await restart();
      for (const { key, value } of entries) {
        expect(await getJson(`${running.base}/retrieve/${key}`)).toEqual({ status: 200, body: { key, value } });
      }
      expect((await postJson(`${running.base}/store`, entries[0]!)).status).toBe(409);
    });
  });

  describe('GET /health', () => {
    it.each(PREFIXES)('answers healthy with the backend name (prefix "%s")', async (prefix) => {
      const res = await getJson(`${running.base}${prefix}/health`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'healthy', service: 'storage', backend: backendName, permanent: false });
    });
  });

  describe('unknown routes', () => {
    it('answers 404 with the error record', async () => {
      const res = await getJson(`${running.base}/storage/nothing-here`);
      expect(res).toEqual({ status: 404, body: { error: 'no such endpoint: GET /storage/nothing-here', code: 'NOT_FOUND' } });
    });
  });

  describe('rate limit', () => {
    it('answers 429 past RATE_LIMIT_PER_SECOND and never limits /health', async () => {
      await restart({ RATE_LIMIT_PER_SECOND: '3', RATE_LIMIT_PER_MINUTE: '1000' });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await getJson(`${running.base}/retrieve/${randomKey()}`)).status);
      expect(statuses).toEqual([404, 404, 404, 429]);
      expect((await getJson(`${running.base}/health`)).status).toBe(200);
    });
  });

  describe('backend contract', () => {
    let backend: StorageBackend;
    beforeEach(async () => {
      backend = await createBackend(
        testConfig(env({ REDIS_KEY_PREFIX: `${backendEnv().REDIS_KEY_PREFIX ?? ''}direct:` })),
        createSilentLogger(),
      );
    });
    afterEach(async () => {
      await backend.close();
    });

    it('puts once, then answers exists until the value expires', async () => {
      const key = randomKey();
      const t = clock.now();
      expect(await backend.put(key, 'aa', 2, t)).toBe('stored');
      expect(await backend.put(key, 'bb', 2, t)).toBe('exists');
      expect(await backend.get(key, t + 1_999)).toBe('aa');
      expect(await backend.get(key, t + 2_000)).toBeUndefined();
      expect(await backend.put(key, 'cc', null, t + 2_000)).toBe('stored');
      expect(await backend.get(key, t + 1e12)).toBe('cc');
      expect(await backend.put(key, 'dd', 1, t + 1e12)).toBe('exists');
    });

    it('never sweeps a live value', async () => {
      const t = clock.now();
      const live = randomKey();
      const dead = randomKey();
      await backend.put(live, 'aa', 100, t);
      await backend.put(dead, 'bb', 1, t);
      const deleted = await backend.sweep(t + 50 * SECOND, 100);
      // SQLite deletes the expired row; Redis expires keys by itself, its sweep has nothing to do.
      expect(deleted).toBe(backendName === 'sqlite' ? 1 : 0);
      expect(await backend.get(live, t + 50 * SECOND)).toBe('aa');
      expect(await backend.get(dead, t + 50 * SECOND)).toBeUndefined();
    });

    it('answers ping and closes twice without error', async () => {
      await expect(backend.ping()).resolves.toBeUndefined();
      await backend.close();
      await expect(backend.close()).resolves.toBeUndefined();
    });
  });
});
