import { parseMetrics, sampleValue, scrape } from '@repo/metrics/testing';
import { createSilentLogger, listen } from '@repo/service';
import { createApp, createBackend } from '../src';
import {
  createTestClock,
  deleteJson,
  getJson,
  makeTempDir,
  randomKey,
  randomValue,
  removeDir,
  startTempService,
  storeValue,
  testConfig,
  type TempService,
} from './support/service';

const SECOND = 1_000;

// Operations (docs/README.md, "Operations"): metrics, readiness, request ids, trusted proxies, over real sockets.
describe('storage operations', () => {
  let running: TempService;
  const clock = createTestClock();

  beforeAll(async () => {
    running = await startTempService({ STORAGE_SWEEP_INTERVAL_MS: '3600000' }, clock.now);
  });
  afterAll(() => running.close());

  it('GET /metrics: requests by route pattern, writes, commit latency, keys and expirations move with use', async () => {
    const before = await scrape(`${running.base}/metrics`);
    const keysBefore = sampleValue(before, 'storage_keys') ?? 0;
    const key = randomKey();
    const token = await storeValue(running.base, key, randomValue());
    await storeValue(running.base, randomKey(), randomValue(), 1);
    expect(sampleValue(await scrape(`${running.base}/metrics`), 'storage_keys')).toBe(keysBefore + 2);
    expect((await getJson(`${running.base}/retrieve/${key}`)).status).toBe(200);
    expect((await deleteJson(`${running.base}/${key}`, token)).status).toBe(200);
    clock.advance(2 * SECOND);
    await running.service.sweeper.runOnce();

    const after = await scrape(`${running.base}/metrics`);
    expect(sampleValue(after, 'http_requests_total', { method: 'POST', route: '/store', status: '200' })).toBe(2);
    expect(sampleValue(after, 'http_requests_total', { method: 'GET', route: '/retrieve/:key', status: '200' })).toBe(1);
    expect(sampleValue(after, 'http_requests_total', { method: 'DELETE', route: '/:key', status: '200' })).toBe(1);
    expect(sampleValue(after, 'storage_writes_total', { operation: 'store', result: 'stored' })).toBe(2);
    expect(sampleValue(after, 'storage_writes_total', { operation: 'delete', result: 'deleted' })).toBe(1);
    expect(sampleValue(after, 'storage_commit_duration_seconds')).toBe(3);
    expect(sampleValue(after, 'storage_expired_total')).toBe(1);
    expect(sampleValue(after, 'storage_keys')).toBe(keysBefore);
    expect(after.get('process_cpu_seconds_total')?.type).toBe('COUNTER');
    // Route patterns only: no key ever becomes a label value.
    const text = await (await fetch(`${running.base}/metrics`)).text();
    expect(text).not.toContain(key);
    expect(parseMetrics(text).size).toBeGreaterThan(5);
  });

  it('GET /ready: 200 while the backend answers', async () => {
    const res = await getJson(`${running.base}/ready`);
    expect(res).toEqual({ status: 200, body: { status: 'ready', backend: 'sqlite' } });
    expect((await getJson(`${running.base}/storage/ready`)).status).toBe(200);
  });

  it('echoes a generated request id, and ignores one sent by an untrusted peer', async () => {
    const res = await fetch(`${running.base}/health`, { headers: { 'x-request-id': 'from-the-client' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('storage readiness without its backend', () => {
  it('GET /ready answers 503 with the reason once the backend is gone', async () => {
    const dir = makeTempDir();
    const config = testConfig({ DATA_DIR: dir });
    const backend = await createBackend(config, createSilentLogger());
    const service = createApp(config, { logger: createSilentLogger(), backend });
    await service.start();
    try {
      const { port } = await listen(service.servers.http, 0, '127.0.0.1');
      await backend.close();
      const res = await getJson(`http://127.0.0.1:${port}/ready`);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'unready', reason: 'backend-unavailable' });
    } finally {
      await service.close().catch(() => undefined);
      removeDir(dir);
    }
  });
});

describe('storage behind a trusted proxy (TRUST_PROXY)', () => {
  const run = (trustProxy: string) => startTempService({ TRUST_PROXY: trustProxy, RATE_LIMIT_PER_MINUTE: '1' });
  const get = (base: string, headers: Record<string, string>) => fetch(`${base}/retrieve/${'ab'.repeat(32)}`, { headers });

  it('keys the rate limit on X-Forwarded-For and takes the proxy request id when the peer is trusted', async () => {
    const service = await run('loopback');
    try {
      const first = await get(service.base, { 'x-forwarded-for': '198.51.100.7', 'x-request-id': 'nginx-42' });
      expect(first.status).toBe(404);
      expect(first.headers.get('x-request-id')).toBe('nginx-42');
      expect((await get(service.base, { 'x-forwarded-for': '198.51.100.8' })).status).toBe(404);
      expect((await get(service.base, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
    } finally {
      await service.close();
    }
  });

  it('keys on the socket when no proxy is trusted (the default)', async () => {
    const service = await run('');
    try {
      expect((await get(service.base, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(404);
      expect((await get(service.base, { 'x-forwarded-for': '198.51.100.8' })).status).toBe(429);
    } finally {
      await service.close();
    }
  });

  it('refuses a bad TRUST_PROXY naming the variable', () => {
    expect(() => testConfig({ TRUST_PROXY: '10.0.0.0/99' })).toThrow(/TRUST_PROXY/);
  });
});
