import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@repo/config';
import { createServer } from 'node:net';
import { loadConfig, DEFAULT_NODE_URL, pendingPerAddress } from '../src/config';
import { call, post, startHarness, type Harness } from './support/helpers';

describe('the node failing', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ NODE_TIMEOUT_MS: '300' }, { initialBlocks: 1 });
  });
  afterEach(() => h.close());

  it.each([
    ['down', 'unreachable'],
    ['hang', 'timed out'],
    ['garbage', 'garbage'],
    ['busy', 'work queue depth exceeded'],
  ] as const)('answers -32603 saying which when the node is %s', async (behaviour, words) => {
    h.node.setBehaviour(behaviour);
    const v1 = await call(h.url, 'getblockcount');
    expect(v1.status).toBe(500);
    expect(v1.json().error.code).toBe(-32603);
    expect(v1.json().error.message).toContain(words);
    const v2 = await post(h.url, [
      { jsonrpc: '2.0', id: 1, method: 'getblockcount' },
      { jsonrpc: '2.0', id: 2, method: 'stop' },
    ]);
    expect(v2.status).toBe(200);
    expect(v2.json().map((r: { error: { code: number } }) => r.error.code)).toEqual([-32603, -32601]);
    h.node.setBehaviour('normal');
    expect((await call(h.url, 'getblockcount')).json().result).toBe(1);
  });

  it('answers -32603 when the node goes away mid-request', async () => {
    h.node.setLatency(200);
    const pending = call(h.url, 'getblockcount');
    while (h.node.stats.inFlight === 0) await new Promise((r) => setTimeout(r, 5));
    h.node.setBehaviour('down');
    const res = await pending;
    expect(res.json().error).toEqual({ code: -32603, message: expect.stringContaining('unreachable') });
  });

  it('queues calls instead of overrunning the node', async () => {
    await h.close();
    // Identical calls would be merged in flight: this is about the queue, so every call goes to the node.
    h = await startHarness({ NODE_MAX_CONCURRENCY: '2', RPC_COALESCE: 'false' }, { initialBlocks: 1, workQueue: 2 });
    h.node.setLatency(30);
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(h.url, 'getblockcount')));
    expect(answers.map((a) => a.json().result)).toEqual(Array(8).fill(1));
    expect(h.node.stats.maxInFlight).toBeLessThanOrEqual(2);
  });
});

describe('node cookie file', () => {
  it('re-reads the cookie file when the node writes a new one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'node-cookie-'));
    const h = await startHarness({}, { cookieFile: join(dir, '.cookie'), initialBlocks: 1 });
    try {
      expect((await call(h.url, 'getblockcount')).json().result).toBe(1);
      h.node.rotateCookie();
      expect((await call(h.url, 'getblockcount')).json().result).toBe(1);
      rmSync(join(dir, '.cookie'));
      h.node.rotateCookie();
      expect((await call(h.url, 'getblockcount')).json().result).toBe(1);
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(18443);
    expect(c.host).toBe('127.0.0.1');
    expect(c.nodeUrl.href).toBe(`${DEFAULT_NODE_URL}/`);
    expect(c.rateLimitPerMinute).toBe(1000);
    expect(c.maxBodyBytes).toBe(32 * 1024 * 1024);
    expect([c.maxConnections, c.maxConnectionsPerIp]).toEqual([1000, 500]);
    expect([c.nodeMaxConcurrency, c.nodeQueueLimit, pendingPerAddress(c)]).toEqual([16, 1024, 520]);
    expect(c.coalesce).toBe(true);
    expect(c.nodeLongPollTimeoutMs).toBe(60_000);
    expect(c.nodeLongPollMaxConcurrency).toBe(8);
    expect(c.allowedMethods.has('waitfornewblock')).toBe(true);
    expect(loadConfig({ RPC_COALESCE: 'false' }).coalesce).toBe(false);
    expect([...c.allowedMethods]).toEqual(
      expect.arrayContaining(['getblockchaininfo', 'getblock', 'getrawtransaction', 'sendrawtransaction', 'getwalletinfo', 'getblockhash']),
    );
  });

  it.each([
    [{ PORT: 'x' }, 'PORT'],
    [{ RPC_USER: 'a' }, 'RPC_PASSWORD'],
    [{ BITCOIND_RPC_URL: 'nope' }, 'BITCOIND_RPC_URL'],
    [{ RPC_AUTH: 'bob:salt$zz' }, 'RPC_AUTH'],
    [{ RPC_USER_METHODS: 'bob:stop' }, 'RPC_USER_METHODS'],
    [{ RPC_COALESCE: 'maybe' }, 'RPC_COALESCE'],
    [{ NODE_LONG_POLL_TIMEOUT_MS: '0' }, 'NODE_LONG_POLL_TIMEOUT_MS'],
  ])('fails at start naming the variable for %j', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});

describe('without a node', () => {
  it('starts and answers -32603 node unreachable', async () => {
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', () => r()));
    const port = (free.address() as { port: number }).port;
    await new Promise((r) => free.close(r));
    const h = await startHarness({ BITCOIND_RPC_URL: `http://127.0.0.1:${port}` }, { initialBlocks: 0 });
    try {
      const res = await call(h.url, 'getblockchaininfo');
      expect(res.json().error).toEqual({ code: -32603, message: expect.stringContaining('node unreachable') });
    } finally {
      await h.close();
    }
  });
});
