import { sampleValue, scrape } from '@repo/metrics/testing';
import { createMemoryLogger, type LogRecord } from '@repo/service';
import { basic, call, post, startGate, startHarness, until, type Gate, type Harness } from './support/helpers';

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

describe('rpc-proxy node call metrics', () => {
  it('count each node call that failed by how it failed, and time it', async () => {
    const h = await startHarness({ NODE_QUEUE_LIMIT: '0' });
    try {
      h.node.setBehaviour('busy');
      expect((await call(h.url, 'getblockcount', [])).json()).toMatchObject({
        error: { code: -32603, message: expect.stringMatching(/node busy/) },
      });
      h.node.setBehaviour('garbage');
      expect((await call(h.url, 'getblockcount', [])).json()).toMatchObject({ error: { message: expect.stringMatching(/garbage/) } });
      // One call out at the node (its path's batch); with no room to wait, the next fails at once.
      h.node.setBehaviour('normal');
      h.node.setLatency(300);
      const first = call(h.url, 'getblockcount', []);
      await until(() => h.node.stats.inFlight === 1);
      expect((await call(h.url, 'getbestblockhash', [])).json()).toMatchObject({ error: { message: expect.stringMatching(/queue full/) } });
      expect((await first).json()).toMatchObject({ result: expect.any(Number) });
      const families = await scrape(`${h.url}/metrics`);
      expect(sampleValue(families, 'rpc_proxy_node_requests_total', { outcome: 'busy' })).toBe(1);
      expect(sampleValue(families, 'rpc_proxy_node_requests_total', { outcome: 'garbage' })).toBe(1);
      expect(sampleValue(families, 'rpc_proxy_node_requests_total', { outcome: 'queue' })).toBe(1);
      expect(sampleValue(families, 'rpc_proxy_node_requests_total', { outcome: 'ok' })).toBe(1);
      expect(sampleValue(families, 'rpc_proxy_node_request_duration_seconds')).toBe(4);
    } finally {
      await h.close();
    }
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

// docs/README.md, "Request ids" and "Logging": the JSON-RPC handler writes the request id with
// its answer's headers and records each request itself (no listener per request).
describe('rpc-proxy request records', () => {
  let h: Harness;
  let gate: Gate;
  let lines: LogRecord[];
  beforeAll(async () => {
    gate = await startGate();
    const memory = createMemoryLogger('info');
    lines = memory.lines;
    h = await startHarness({ BITCOIND_RPC_URL: gate.url }, { initialBlocks: 5 }, memory.logger);
    gate.target = h.node.url;
    gate.release(true);
  });
  afterAll(async () => {
    await h.close();
    await gate.close();
  });
  const requestLines = () => lines.filter((l) => l.msg === 'request');

  it('logs every JSON-RPC answer with the request id it carries', async () => {
    const answers = [
      await call(h.url, 'getblockcount', []),
      await call(h.url, 'getblockcount', [], { path: '/wallet/w1', auth: null }),
      await post(h.url, { jsonrpc: '2.0', method: 'getblockcount', params: [] }),
      await post(h.url, '{}', { path: '/nowhere?secret=1' }),
      await post(h.url, 'not json'),
      await post(h.url, [{ jsonrpc: '2.0', id: 1, method: 'getblockcount' }]),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 204, 404, 500, 200]);
    await until(() => requestLines().length === answers.length);
    const logged = requestLines();
    answers.forEach((a, i) => {
      const id = a.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(logged[i]).toMatchObject({ request_id: id, status: a.status, method: 'POST', ip: '127.0.0.1', service: 'test' });
      expect(typeof logged[i]?.ms).toBe('number');
    });
    expect(logged.map((l) => [l.path, l.rpc, l.user])).toEqual([
      ['/', 'getblockcount', 'alice'],
      ['/wallet/w1', '-', undefined],
      ['/', 'getblockcount', 'alice'],
      ['/nowhere', '-', undefined],
      ['/', '-', 'alice'],
      ['/', 'batch(1)', 'alice'],
    ]);
    const families = await scrape(`${h.url}/metrics`);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: '/', status: '204' })).toBe(1);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: 'unmatched', status: '404' })).toBe(1);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: '/wallet/:name', status: '401' })).toBe(1);
  });

  it('counts a request whose client left before the answer with status 0', async () => {
    gate.release(false);
    const before = sampleValue(await scrape(`${h.url}/metrics`), 'http_requests_total', { method: 'POST', route: '/', status: '0' }) ?? 0;
    const abort = new AbortController();
    const pending = fetch(h.url, {
      method: 'POST',
      headers: { Authorization: basic('alice', 'alice-secret') },
      body: '{"jsonrpc":"1.0","id":7,"method":"getblockcount","params":[]}',
      signal: abort.signal,
    }).catch(() => 'aborted');
    await until(() => gate.held === 1);
    const logged = requestLines().length;
    abort.abort();
    expect(await pending).toBe('aborted');
    gate.release(true);
    await until(() => requestLines().length === logged + 1);
    const families = await scrape(`${h.url}/metrics`);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: '/', status: '0' })).toBe(before + 1);
  });
});

// A fault of the proxy's own (a bug, not the node's failure) is a 500 with a JSON-RPC envelope
// and an error line, whether it comes at once or from a pending call; the next call is served.
describe('rpc-proxy after an unexpected error', () => {
  let h: Harness;
  let lines: LogRecord[];
  beforeAll(async () => {
    const memory = createMemoryLogger('info');
    lines = memory.lines;
    h = await startHarness({}, { initialBlocks: 5 }, memory.logger);
  });
  afterAll(() => h.close());

  it.each([
    [
      'thrown at once',
      () => {
        throw new Error('bug: thrown');
      },
    ],
    ['from a pending call', () => Promise.reject(new Error('bug: rejected'))],
  ])('answers 500 and logs it when the fault is %s, and serves the next call', async (_what, fault) => {
    const node = h.app.node;
    const real = node.callBatched;
    node.callBatched = fault;
    const before = lines.length;
    let failed;
    try {
      failed = await call(h.url, 'getblockhash', [1], { id: 9 });
    } finally {
      node.callBatched = real;
    }
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(failed.json()).toEqual({ result: null, error: { code: -32603, message: 'internal error' }, id: null });
    await until(() => lines.slice(before).some((l) => l.msg === 'unexpected error'));
    const logged = lines.slice(before).find((l) => l.msg === 'unexpected error') as LogRecord & { err: { message: string } };
    expect(logged.level).toBe(50);
    expect(logged.err.message).toMatch(/^bug: /);
    const next = await call(h.url, 'getblockhash', [1]);
    expect(next.status).toBe(200);
    expect(next.json().result).toMatch(/^[0-9a-f]{64}$/);
    const families = await scrape(`${h.url}/metrics`);
    expect(sampleValue(families, 'http_requests_total', { method: 'POST', route: '/', status: '500' })).toBeGreaterThanOrEqual(1);
  });
});
