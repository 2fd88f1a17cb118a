import { renameSync } from 'node:fs';
import { parseMetrics, sampleValue } from '@repo/metrics/testing';
import { get, startServer, type Harness } from './support/harness';

// Operations (docs/README.md, "Operations"): metrics, readiness and request ids, over real TLS.
describe('config server operations', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(() => h.close());

  async function scrape() {
    const res = await get(h, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(res.text);
  }

  it('GET /metrics counts fetches by environment, mode and result, and requests by route pattern', async () => {
    const first = await get(h, '/dev/app.conf');
    expect(first.status).toBe(200);
    const again = await get(h, '/dev/app.conf', { 'If-None-Match': String(first.headers.etag) });
    expect(again.status).toBe(304);
    expect((await get(h, '/prod/app.conf')).status).toBe(200);
    expect((await get(h, '/no-such-env/x.conf')).status).toBe(404);

    const families = await scrape();
    expect(sampleValue(families, 'config_fetches_total', { environment: 'dev', mode: 'psk', result: 'served' })).toBe(1);
    expect(sampleValue(families, 'config_fetches_total', { environment: 'dev', mode: 'psk', result: 'not_modified' })).toBe(1);
    expect(sampleValue(families, 'config_fetches_total', { environment: 'prod', mode: 'psk', result: 'served' })).toBe(1);
    expect(sampleValue(families, 'config_fetches_total', { environment: 'no-such-env' })).toBe(0);
    expect(sampleValue(families, 'http_requests_total', { method: 'GET', route: '/:env/:file', status: '200' })).toBe(2);
    expect(sampleValue(families, 'http_requests_total', { method: 'GET', route: '/:env/:file', status: '404' })).toBe(1);
    expect(sampleValue(families, 'config_watch_waiting_requests')).toBe(0);
    expect((await get(h, '/metrics')).text).not.toContain('app.conf');
  });

  it('echoes a request id on every answer and logs it', async () => {
    const res = await get(h, '/health', { 'X-Request-Id': 'sent-by-a-client' });
    const id = res.headers['x-request-id'];
    // The peer is no trusted proxy (TRUST_PROXY unset): its id is replaced.
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // The line is written when the response ends, which the client may see a moment before.
    while (!h.logs.some((line) => line.msg === 'request' && line.request_id === id))
      await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it('GET /ready: 200, then 503 storage-unavailable when STORAGE_DIR goes away', async () => {
    const ready = await get(h, '/ready');
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
    renameSync(h.storageDir, `${h.storageDir}.moved`);
    try {
      const unready = await get(h, '/ready');
      expect(unready.status).toBe(503);
      expect(unready.json()).toMatchObject({ status: 'unready', reason: 'storage-unavailable' });
    } finally {
      renameSync(`${h.storageDir}.moved`, h.storageDir);
    }
    expect((await get(h, '/ready')).status).toBe(200);
  });
});

describe('config server behind a trusted proxy', () => {
  it('takes the proxy request id and keys the rate limit on X-Forwarded-For', async () => {
    const h = await startServer({ TRUST_PROXY: 'loopback', RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_PER_SECOND: '0' });
    try {
      const first = await get(h, '/health', { 'X-Forwarded-For': '198.51.100.1', 'X-Request-Id': 'nginx-7' });
      expect(first.status).toBe(200);
      expect(first.headers['x-request-id']).toBe('nginx-7');
      expect((await get(h, '/health', { 'X-Forwarded-For': '198.51.100.2' })).status).toBe(200);
      expect((await get(h, '/health', { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(429);
    } finally {
      await h.close();
    }
  });
});
