import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { hashWriteToken } from '../src';
import { startRedis, type RedisHandle } from './support/redis-server';
import {
  createTestClock,
  deleteJson,
  getJson,
  makeTempDir,
  postJson,
  randomKey,
  removeDir,
  startService,
  storeValue,
  testConfig,
  touchJson,
  type RunningService,
  type TestClock,
} from './support/service';

// The Redis layout (docs/storage.md, "Write tokens"): a value with a write token is a hash
// {v, w}; a value written by a version from before write tokens is a plain string, which keeps
// being served and has no token.
describe('Redis layout', () => {
  let redis: RedisHandle;
  let client: ReturnType<typeof createClient>;
  let dir: string;
  let clock: TestClock;
  let running: RunningService;
  const prefix = `storage-test:${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    redis = await startRedis();
    client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await redis?.cleanup(prefix);
    await redis?.stop();
  });
  beforeEach(async () => {
    dir = makeTempDir();
    clock = createTestClock();
    running = await startService(
      testConfig({ DATA_DIR: dir, STORAGE_BACKEND: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix }),
      clock.now,
    );
  });
  afterEach(async () => {
    await running.close();
    removeDir(dir);
  });

  it('keeps a stored value as a hash of the value and the SHA-256 of its token, never the token', async () => {
    const key = randomKey();
    const token = await storeValue(running.base, key, 'abcd', 60);
    expect(await client.hGetAll(prefix + key)).toEqual({ v: 'abcd', w: hashWriteToken(token).toString('hex') });
    expect(await client.pExpireTime(prefix + key)).toBe(clock.now() + 60_000);
  });

  it('serves a value written before write tokens (a plain string) and refuses to delete or touch it', async () => {
    const live = randomKey();
    const forever = randomKey();
    await client.set(prefix + live, 'aa', { expiration: { type: 'PXAT', value: clock.now() + 60_000 } });
    await client.set(prefix + forever, 'bb');

    expect(await getJson(`${running.base}/retrieve/${live}`)).toEqual({
      status: 200,
      body: { key: live, value: 'aa', expires_at: new Date(clock.now() + 60_000).toISOString(), ttl_remaining: 60 },
    });
    expect((await getJson(`${running.base}/retrieve/${forever}`)).body).toEqual({
      key: forever,
      value: 'bb',
      expires_at: null,
      ttl_remaining: null,
    });
    for (const key of [live, forever]) {
      const del = await deleteJson(`${running.base}/${key}`, randomKey());
      expect(del).toMatchObject({
        status: 403,
        body: { error: expect.stringContaining('value has no write token'), code: 'ACCESS_DENIED' },
      });
      const touch = await touchJson(`${running.base}/touch/${key}`, { ttl: 5 }, randomKey());
      expect(touch).toMatchObject({ status: 403, body: { error: expect.stringContaining('value has no write token') } });
      expect((await postJson(`${running.base}/store`, { key, value: 'cc' })).status).toBe(409);
    }
    expect(await client.get(prefix + forever)).toBe('bb');
    expect(await client.pExpireTime(prefix + live)).toBe(clock.now() + 60_000);
  });

  it('replaces an old string value that has expired on the service clock with a new value and token', async () => {
    const key = randomKey();
    await client.set(prefix + key, 'aa', { expiration: { type: 'PXAT', value: clock.now() + 60_000 } });
    clock.advance(60_000);
    expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
    expect((await deleteJson(`${running.base}/${key}`, randomKey())).status).toBe(404);
    const token = await storeValue(running.base, key, 'dd', 30);
    expect(await client.type(prefix + key)).toBe('hash');
    expect((await touchJson(`${running.base}/touch/${key}`, { ttl: 90 }, token)).body.ttl_remaining).toBe(90);
    expect(await client.pExpireTime(prefix + key)).toBe(clock.now() + 90_000);
    expect((await deleteJson(`${running.base}/${key}`, token)).status).toBe(200);
    expect(await client.exists(prefix + key)).toBe(0);
  });

  it('makes a value permanent on Redis too (PERSIST)', async () => {
    await running.close();
    running = await startService(
      testConfig({ DATA_DIR: dir, STORAGE_BACKEND: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, STORAGE_PERMANENT: 'true' }),
      clock.now,
    );
    const key = randomKey();
    const token = await storeValue(running.base, key, 'abcd', 60);
    expect((await touchJson(`${running.base}/touch/${key}`, { permanent: true }, token)).status).toBe(200);
    expect(await client.pExpireTime(prefix + key)).toBe(-1);
  });
});
