import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSilentLogger } from '@repo/service';
import { createBackend, DEFAULT_TTL_SECONDS, hashWriteToken, type StorageBackend, type StorageBackendName } from '../src';
import { useBackend } from './support/redis-server';
import {
  createTestClock,
  deleteJson,
  getJson,
  makeTempDir,
  postJson,
  randomKey,
  randomValue,
  removeDir,
  startService,
  storeValue,
  testConfig,
  touchJson,
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
      expect(res.body).toEqual({
        message: 'value stored',
        key,
        expires_at: new Date(clock.now() + 60 * SECOND).toISOString(),
        write_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(await getJson(`${running.base}${prefix}/retrieve/${key}`)).toEqual({
        status: 200,
        body: { key, value, expires_at: res.body.expires_at, ttl_remaining: 60 },
      });
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

    it('keeps a value near the default body limit intact', async () => {
      const key = randomKey();
      const value = randomValue(500 * 1024);
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
      expect(await getJson(`${running.base}/retrieve/${key}`)).toMatchObject({ status: 200, body: { key, value } });
      expect(await getJson(`${running.base}/retrieve/${key.toUpperCase()}`)).toMatchObject({ status: 200, body: { key, value } });
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

  describe.each(PREFIXES)('GET %s/retrieve/:key lifetime fields', (prefix) => {
    it('answers expires_at and ttl_remaining, rounded up to whole seconds', async () => {
      const key = randomKey();
      const stored = await postJson(`${running.base}/store`, { key, value: 'ab', ttl: 30 });
      clock.advance(10 * SECOND + 400);
      const res = await getJson(`${running.base}${prefix}/retrieve/${key}`);
      expect(res).toEqual({ status: 200, body: { key, value: 'ab', expires_at: stored.body.expires_at, ttl_remaining: 20 } });
      clock.advance(19 * SECOND + 599);
      expect((await getJson(`${running.base}${prefix}/retrieve/${key}`)).body.ttl_remaining).toBe(1);
    });

    it('answers null for both when the value never expires', async () => {
      await restart({ STORAGE_PERMANENT: 'true' });
      const key = randomKey();
      await storeValue(running.base, key, 'ab');
      expect((await getJson(`${running.base}${prefix}/retrieve/${key}`)).body).toEqual({
        key,
        value: 'ab',
        expires_at: null,
        ttl_remaining: null,
      });
    });
  });

  describe.each(PREFIXES)('DELETE %s/:key', (prefix) => {
    const url = (key: string) => `${running.base}${prefix}/${key}`;

    it('deletes with the write token: 200, then 404, and the key may be stored again with a new token', async () => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 60);
      expect(await deleteJson(url(key), token)).toMatchObject({ status: 200, body: { message: 'value deleted', key } });
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
      expect(await deleteJson(url(key), token)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      const second = await storeValue(running.base, key, 'ef', 60);
      expect(second).not.toBe(token);
      expect((await deleteJson(url(key), token)).status).toBe(403);
      expect((await getJson(`${running.base}/retrieve/${key}`)).body.value).toBe('ef');
      expect((await deleteJson(url(key), second.toUpperCase())).status).toBe(200);
    });

    it.each([
      ['no Authorization header', undefined],
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['a Bearer header without a token', 'Bearer '],
    ])('answers 401 with WWW-Authenticate for %s, and keeps the value', async (_name, header) => {
      const key = randomKey();
      await storeValue(running.base, key, 'abcd');
      const res = await deleteJson(url(key), header);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.stringContaining('write token required'), code: 'UNAUTHORIZED' });
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="storage"');
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(200);
    });

    it('answers 401 with error="invalid_token" for a token that is not 64 hex characters', async () => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd');
      const res = await deleteJson(url(key), token.slice(0, 63));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'malformed write token: it must be 64 hex characters, got length=63', code: 'UNAUTHORIZED' });
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="storage", error="invalid_token"');
    });

    it('answers 403 with a wrong token, or the token of another key, and keeps the value', async () => {
      const key = randomKey();
      const other = randomKey();
      await storeValue(running.base, key, 'abcd');
      const otherToken = await storeValue(running.base, other, 'ef');
      for (const token of [randomKey(), otherToken]) {
        const res = await deleteJson(url(key), token);
        expect(res).toMatchObject({
          status: 403,
          body: { error: expect.stringContaining('write token does not match'), code: 'ACCESS_DENIED' },
        });
      }
      expect((await getJson(`${running.base}/retrieve/${key}`)).body.value).toBe('abcd');
      expect((await getJson(`${running.base}/retrieve/${other}`)).body.value).toBe('ef');
    });

    it('answers 404 for a missing key and for an expired one', async () => {
      expect(await deleteJson(url(randomKey()), randomKey())).toMatchObject({
        status: 404,
        body: { error: expect.stringContaining('key not found'), code: 'NOT_FOUND' },
      });
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 5);
      clock.advance(5 * SECOND);
      expect((await deleteJson(url(key), token)).status).toBe(404);
    });

    it.each([
      ['a short key', 'abcd', 'got length=4'],
      ['a non-hex key', 'x'.repeat(64), 'only hex characters'],
    ])('answers 400 for %s', async (_name, key, error) => {
      const res = await deleteJson(url(key), randomKey());
      expect(res).toMatchObject({ status: 400, body: { error: expect.stringContaining(error), code: 'INVALID_REQUEST' } });
    });
  });

  describe.each(PREFIXES)('POST %s/touch/:key', (prefix) => {
    const url = (key: string) => `${running.base}${prefix}/touch/${key}`;

    it('sets a new ttl from now, longer or shorter, and answers the new expiry', async () => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 10);
      clock.advance(8 * SECOND);
      const longer = await touchJson(url(key), { ttl: 100 }, token);
      const expected = new Date(clock.now() + 100 * SECOND).toISOString();
      expect(longer).toMatchObject({ status: 200, body: { message: 'expiry updated', key, expires_at: expected, ttl_remaining: 100 } });
      clock.advance(50 * SECOND);
      expect(await getJson(`${running.base}/retrieve/${key}`)).toMatchObject({
        status: 200,
        body: { expires_at: expected, ttl_remaining: 50 },
      });
      expect((await touchJson(url(key), { ttl: 3 }, token)).body.ttl_remaining).toBe(3);
      clock.advance(3 * SECOND);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
      expect((await postJson(`${running.base}/store`, { key, value: 'ef' })).status).toBe(200);
    });

    it(`applies the store default (${DEFAULT_TTL_SECONDS} s) to an empty body`, async () => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 10);
      const res = await touchJson(url(key), {}, token);
      expect(res.body).toMatchObject({ expires_at: new Date(clock.now() + DEFAULT_TTL_SECONDS * SECOND).toISOString() });
    });

    it('makes a value permanent with {permanent: true} when the service runs with the permanent option', async () => {
      await restart({ STORAGE_PERMANENT: 'true' });
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 10);
      expect(await touchJson(url(key), { permanent: true }, token)).toMatchObject({
        status: 200,
        body: { expires_at: null, ttl_remaining: null },
      });
      clock.advance(10 * 365 * 86_400 * SECOND);
      expect((await getJson(`${running.base}/retrieve/${key}`)).body).toMatchObject({ value: 'abcd', expires_at: null });
      // And back to a lifetime.
      expect((await touchJson(url(key), { ttl: 5 }, token)).body.ttl_remaining).toBe(5);
      clock.advance(5 * SECOND);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
    });

    it.each([
      ['a ttl of 0', { ttl: 0 }, '"ttl" must be a positive integer number of seconds'],
      ['a fractional ttl', { ttl: 1.5 }, 'got 1.5'],
      ['a ttl as a string', { ttl: '60' }, 'got string'],
      ['a ttl over the maximum', { ttl: 31_536_001 }, 'at most 31536000'],
      ['permanent without the option', { permanent: true }, 'needs the service to run with the permanent option'],
      ['both ttl and permanent', { ttl: 5, permanent: true }, 'not both'],
      ['a permanent that is not a boolean', { permanent: 'yes' }, '"permanent" must be true or false'],
      ['an array body', [60], 'request body must be a JSON object'],
    ])('answers 400 for %s and leaves the expiry as it was', async (_name, body, error) => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 10);
      const res = await touchJson(url(key), body, token);
      expect(res).toMatchObject({ status: 400, body: { error: expect.stringContaining(error), code: 'INVALID_REQUEST' } });
      expect((await getJson(`${running.base}/retrieve/${key}`)).body.ttl_remaining).toBe(10);
    });

    it('answers 401 without a token, 403 with a wrong one, 404 for a missing or expired key', async () => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd', 10);
      const missing = await touchJson(url(key), { ttl: 60 });
      expect(missing).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="storage"');
      expect(await touchJson(url(key), { ttl: 60 }, randomKey())).toMatchObject({ status: 403, body: { code: 'ACCESS_DENIED' } });
      expect((await getJson(`${running.base}/retrieve/${key}`)).body.ttl_remaining).toBe(10);
      expect((await touchJson(url(randomKey()), { ttl: 60 }, token)).status).toBe(404);
      clock.advance(10 * SECOND);
      expect((await touchJson(url(key), { ttl: 60 }, token)).status).toBe(404);
      expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(404);
    });

    it('answers 405 to another method', async () => {
      const res = await getJson(url(randomKey()));
      expect(res).toEqual({ status: 405, body: { error: expect.stringContaining('POST'), code: 'METHOD_NOT_ALLOWED' } });
    });
  });

  describe('races (concurrent requests over real sockets)', () => {
    const ROUNDS = 24;
    // How far (ms) the first request is sent ahead of the second in each round; negative: the
    // second goes first. Sent together, the body-less DELETE tends to reach the backend first;
    // the leads make each backend see both orders as well as true ties.
    const LEADS = [0, 0, 1, -1, 3, -3, 15, -15];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    async function race<A, B>(round: number, first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
      const lead = LEADS[round % LEADS.length]!;
      const a = (async () => {
        if (lead < 0) await sleep(-lead);
        return first();
      })();
      const b = (async () => {
        if (lead > 0) await sleep(lead);
        return second();
      })();
      return Promise.all([a, b]);
    }

    it('a delete and a touch of one key at once: the delete wins or the touch runs first; the value is gone', async () => {
      const keys = Array.from({ length: ROUNDS }, () => randomKey());
      const tokens = await Promise.all(keys.map((key) => storeValue(running.base, key, 'abcd', 60)));
      const outcomes = await Promise.all(
        keys.map(async (key, i) => {
          const [d, t] = await race(
            i,
            () => deleteJson(`${running.base}/${key}`, tokens[i]),
            () => touchJson(`${running.base}/touch/${key}`, { ttl: 600 }, tokens[i]),
          );
          return [d.status, t.status];
        }),
      );
      // The touch never brings a deleted value back; a delete never fails for a touched one.
      for (const [d, t] of outcomes) {
        expect(d).toBe(200);
        expect([200, 404]).toContain(t);
      }
      const after = await Promise.all(keys.map((key) => getJson(`${running.base}/retrieve/${key}`)));
      expect(after.map((r) => r.status)).toEqual(keys.map(() => 404));
    });

    it('a delete and a store of one key at once: either the store lost (409) and the key is gone, or it came after and holds', async () => {
      const keys = Array.from({ length: ROUNDS }, () => randomKey());
      const tokens = await Promise.all(keys.map((key) => storeValue(running.base, key, 'aa', 60)));
      const outcomes = await Promise.all(
        keys.map(async (key, i) => {
          const [d, s] = await race(
            i,
            () => deleteJson(`${running.base}/storage/${key}`, tokens[i]),
            () => postJson(`${running.base}/storage/store`, { key, value: 'bb', ttl: 60 }),
          );
          return { key, deleted: d.status, stored: s.status, newToken: s.body.write_token as string | undefined };
        }),
      );
      for (const o of outcomes) {
        expect(o.deleted).toBe(200);
        expect([200, 409]).toContain(o.stored);
        const now = await getJson(`${running.base}/retrieve/${o.key}`);
        if (o.stored === 200) {
          // The store came after the delete: its value holds, under its own token.
          expect(now).toMatchObject({ status: 200, body: { value: 'bb' } });
          expect((await deleteJson(`${running.base}/${o.key}`, o.newToken)).status).toBe(200);
        } else {
          expect(now.status).toBe(404);
        }
      }
    });

    it('many deletes with the same token at once: exactly one 200, the others 404', async () => {
      const key = randomKey();
      const token = await storeValue(running.base, key, 'abcd');
      const statuses = (await Promise.all(Array.from({ length: 16 }, () => deleteJson(`${running.base}/${key}`, token)))).map(
        (r) => r.status,
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 404)).toHaveLength(15);
    });
  });

  describe('restart', () => {
    it('retrieves after a restart what was stored before it', async () => {
      const entries = Array.from({ length: 20 }, () => ({ key: randomKey(), value: randomValue() }));
      for (const entry of entries) expect((await postJson(`${running.base}/store`, entry)).status).toBe(200);
      await restart();
      for (const { key, value } of entries) {
        expect(await getJson(`${running.base}/retrieve/${key}`)).toMatchObject({ status: 200, body: { key, value } });
      }
      expect((await postJson(`${running.base}/store`, entries[0]!)).status).toBe(409);
    });

    it('keeps write tokens, deletes and touches across a restart', async () => {
      const [a, b, c] = [randomKey(), randomKey(), randomKey()];
      const tokens = [
        await storeValue(running.base, a, 'aa', 60),
        await storeValue(running.base, b, 'bb', 60),
        await storeValue(running.base, c, 'cc', 60),
      ];
      expect((await deleteJson(`${running.base}/${a}`, tokens[0])).status).toBe(200);
      expect((await touchJson(`${running.base}/touch/${b}`, { ttl: 600 }, tokens[1])).status).toBe(200);
      await restart();
      expect((await getJson(`${running.base}/retrieve/${a}`)).status).toBe(404);
      expect((await getJson(`${running.base}/retrieve/${b}`)).body.ttl_remaining).toBe(600);
      expect((await deleteJson(`${running.base}/${c}`, tokens[0])).status).toBe(403);
      expect((await deleteJson(`${running.base}/${c}`, tokens[2])).status).toBe(200);
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

    const hashA = hashWriteToken(randomKey());
    const hashB = hashWriteToken(randomKey());

    it('puts once, then answers exists until the value expires', async () => {
      const key = randomKey();
      const t = clock.now();
      expect(await backend.put(key, 'aa', 2, t, hashA)).toBe('stored');
      expect(await backend.put(key, 'bb', 2, t, hashB)).toBe('exists');
      expect(await backend.get(key, t + 1_999)).toEqual({ value: 'aa', expiresAt: t + 2_000 });
      expect(await backend.get(key, t + 2_000)).toBeUndefined();
      expect(await backend.put(key, 'cc', null, t + 2_000, hashB)).toBe('stored');
      expect(await backend.get(key, t + 1e12)).toEqual({ value: 'cc', expiresAt: null });
      expect(await backend.put(key, 'dd', 1, t + 1e12, hashA)).toBe('exists');
    });

    it('deletes only with the token hash of the value, and only a live value', async () => {
      const key = randomKey();
      const t = clock.now();
      expect(await backend.delete(key, hashA, t)).toBe('not_found');
      await backend.put(key, 'aa', 10, t, hashA);
      expect(await backend.delete(key, hashB, t)).toBe('forbidden');
      expect(await backend.get(key, t)).toEqual({ value: 'aa', expiresAt: t + 10_000 });
      expect(await backend.delete(key, hashA, t + 10_000)).toBe('not_found');
      expect(await backend.delete(key, hashA, t)).toBe('deleted');
      expect(await backend.get(key, t)).toBeUndefined();
      expect(await backend.delete(key, hashA, t)).toBe('not_found');
      // The key is free again; the new value has its own token.
      expect(await backend.put(key, 'bb', 10, t, hashB)).toBe('stored');
      expect(await backend.delete(key, hashA, t)).toBe('forbidden');
    });

    it('touches only with the token hash: a new expiry, later, earlier or never', async () => {
      const key = randomKey();
      const t = clock.now();
      await backend.put(key, 'aa', 10, t, hashA);
      expect(await backend.touch(key, hashB, 100, t)).toBe('forbidden');
      expect(await backend.touch(key, hashA, 100, t + 5_000)).toEqual({ expiresAt: t + 105_000 });
      expect(await backend.get(key, t + 104_999)).toEqual({ value: 'aa', expiresAt: t + 105_000 });
      expect(await backend.get(key, t + 105_000)).toBeUndefined();
      expect(await backend.touch(key, hashA, 1, t + 200_000)).toBe('not_found');
      expect(await backend.touch(key, hashA, null, t + 6_000)).toEqual({ expiresAt: null });
      expect(await backend.get(key, t + 1e12)).toEqual({ value: 'aa', expiresAt: null });
      expect(await backend.touch(key, hashA, 2, t + 7_000)).toEqual({ expiresAt: t + 9_000 });
      expect(await backend.get(key, t + 9_000)).toBeUndefined();
      // An expired value cannot be touched back to life, and may be stored again.
      expect(await backend.put(key, 'bb', 2, t + 9_000, hashB)).toBe('stored');
    });

    it('never sweeps a live value', async () => {
      const t = clock.now();
      const live = randomKey();
      const dead = randomKey();
      await backend.put(live, 'aa', 100, t, hashA);
      await backend.put(dead, 'bb', 1, t, hashA);
      const deleted = await backend.sweep(t + 50 * SECOND, 100);
      // SQLite deletes the expired row; Redis expires keys by itself, its sweep has nothing to do.
      expect(deleted).toBe(backendName === 'sqlite' ? 1 : 0);
      expect((await backend.get(live, t + 50 * SECOND))?.value).toBe('aa');
      expect(await backend.get(dead, t + 50 * SECOND)).toBeUndefined();
    });

    it('answers ping and closes twice without error', async () => {
      await expect(backend.ping()).resolves.toBeUndefined();
      await backend.close();
      await expect(backend.close()).resolves.toBeUndefined();
    });
  });
});
