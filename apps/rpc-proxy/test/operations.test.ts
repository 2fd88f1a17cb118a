import { sampleValue, scrape } from '@repo/metrics/testing';
import { basic, call, post, startGate, startHarness, until, type Gate, type Harness } from './helpers';

// Operations (docs/README.md, "Operations"): metrics, request ids and trusted proxies, over real sockets.
describe('rpc-proxy GET /metrics', () => {
  let h: Harness;
  let gate: Gate;
  beforeAll(async () => {
    gate = await startGate();
    h = await startHarness({ BITCOIND_RPC_URL: gate.url, NODE_MAX_CONCURRENCY: '64' }, { initialBlocks: 5 });
    gate.target = h.node.url;
    gate.release(true);
  });
  afterAll(async () => {
    await h.close();
    await gate.close();
  });

  it('node latency, cache hits, coalescing and auth failures move with use', async () => {
    const hash = (await call(h.url, 'getblockhash', [1])).json().result as string;
    expect((await call(h.url, 'getblock', [hash, 0])).status).toBe(200);
    expect((await call(h.url, 'getblock', [hash, 0])).status).toBe(200);
    expect((await call(h.url, 'getblockcount', [], { auth: basic('alice', 'wrong') })).status).toBe(401);
    expect((await call(h.url, 'getblockcount', [], { auth: null })).status).toBe(401);
    // Identical reads held at the node: one goes there, the others join its flight.
    gate.release(false);
    const pending = [1, 2, 3].map((id) => post(h.url, { jsonrpc: '1.0', id, method: 'getblockchaininfo', params: [] }));
    await until(() => gate.held === 1 && h.app.coalescer.stats.waiting === 2);
    gate.release(true);
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([200, 200, 200]);

    const families = await scrape(`${h.url}/metrics`);
    // getblockhash, one getblock (the second is a cache hit), one getblockchaininfo.
    expect(sampleValue(families, 'rpc_proxy_node_request_duration_seconds')).toBe(3);
    expect(sampleValue(families, 'rpc_proxy_node_requests_total', { outcome: 'ok' })).toBe(3);
    expect(sampleValue(families, 'rpc_proxy_cache_hits_total')).toBe(1);
    expect(sampleValue(families, 'rpc_proxy_cache_misses_total')).toBe(1);
    expect(sampleValue(families, 'rpc_proxy_coalesced_total')).toBe(2);
    expect(sampleValue(families, 'rpc_proxy_auth_failures_total', { reason: 'invalid' })).toBe(1);
    expect(sampleValue(families, 'rpc_proxy_auth_failures_total', { reason: 'missing' })).toBe(1);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: '/', status: '200' })).toBe(6);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: '/', status: '401' })).toBe(2);
  });

  it('counts requests by route pattern, never by raw path, and echoes a request id', async () => {
    const res = await post(h.url, '{}', { path: '/wallet/some-wallet-name' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await fetch(`${h.url}/no/such/path`);
    const text = await (await fetch(`${h.url}/metrics`)).text();
    expect(text).not.toContain('some-wallet-name');
    expect(text).toContain('route="/wallet/:name"');
    expect(text).toContain('route="unmatched"');
  });
});

describe('rpc-proxy behind a trusted proxy', () => {
  it('keys the rate limit on X-Forwarded-For and keeps the proxy request id', async () => {
    const h = await startHarness({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '1' });
    try {
      const send = (client: string, id?: string) =>
        fetch(h.url, {
          method: 'POST',
          headers: { 'X-Forwarded-For': client, Authorization: basic('alice', 'alice-secret'), ...(id ? { 'X-Request-Id': id } : {}) },
          body: '{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}',
        });
      const first = await send('198.51.100.1', 'nginx-9');
      expect(first.status).toBe(200);
      expect(first.headers.get('x-request-id')).toBe('nginx-9');
      expect((await send('198.51.100.2')).status).toBe(200);
      expect((await send('198.51.100.1')).status).toBe(429);
    } finally {
      await h.close();
    }
  });
});
