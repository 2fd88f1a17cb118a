import { readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { signSpend } from '@repo/chain-double';
import { createSilentLogger, listen } from '@repo/service';
import { createApp } from '../src/app';
import { makeRpcAuthLine } from '../src/auth';
import { loadConfig } from '../src/config';
import { basic, call, NODE_PASSWORD, NODE_USER, post, startHarness, type Harness } from './support/helpers';

describe('client authentication', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ RPC_AUTH: `rpcauth=carol:${makeRpcAuthLine('carol', 'carol-pass').split(':')[1]}` });
  });
  afterAll(() => h.close());

  it('writes a 0600 cookie file that authenticates', async () => {
    const cookie = readFileSync(h.app.cookieFile, 'utf8');
    expect(cookie).toMatch(/^__cookie__:[0-9a-f]{64}$/);
    expect(statSync(h.app.cookieFile).mode & 0o777).toBe(0o600);
    const [user, pass] = cookie.split(':') as [string, string];
    expect((await call(h.url, 'getblockcount', [], { auth: basic(user, pass) })).status).toBe(200);
  });

  it('leaves the cookie of a running proxy alone when a second one on its DATA_DIR cannot listen', async () => {
    const before = readFileSync(h.app.cookieFile, 'utf8');
    const second = createApp(
      loadConfig({ DATA_DIR: h.dataDir, RPC_USER: 'alice', RPC_PASSWORD: 'alice-secret', BITCOIND_RPC_URL: h.node.url }),
      { logger: createSilentLogger() },
    );
    await second.start();
    await expect(listen(second.servers.http, Number(new URL(h.url).port), '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await second.close();
    expect(readFileSync(h.app.cookieFile, 'utf8')).toBe(before);
  });

  it('accepts user and password, and rpcauth lines', async () => {
    expect((await call(h.url, 'getblockcount')).status).toBe(200);
    expect((await call(h.url, 'getblockcount', [], { auth: basic('carol', 'carol-pass') })).status).toBe(200);
  });

  it.each([
    ['a wrong password', basic('alice', 'nope')],
    ['a wrong rpcauth password', basic('carol', 'nope')],
    ['a wrong user', basic('mallory', 'alice-secret')],
    ['another scheme', 'Bearer abc'],
    ['malformed base64', 'Basic !!!notbase64'],
    ['no credentials', null],
  ])('answers 401 with the -1 envelope and the request id for %s', async (_what, auth) => {
    const res = await call(h.url, 'getblockcount', [], { auth, id: 'a1' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="jsonrpc"');
    expect(res.json()).toEqual({ result: null, error: { code: -1, message: expect.any(String) }, id: 'a1' });
  });

  it('never lets client credentials reach the node, and uses its own', async () => {
    h.node.clearRequests();
    await call(h.url, 'getblockcount');
    expect(h.node.requests.map((r) => r.headers.authorization)).toEqual([basic(NODE_USER, NODE_PASSWORD)]);
  });
});

describe('allow-lists and parameter checks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      RPC_AUTH: `${makeRpcAuthLine('monitor', 'mon')},${makeRpcAuthLine('wallet', 'wal')}`,
      RPC_USER_METHODS: 'monitor:getblockcount,getblockchaininfo;wallet:sendrawtransaction,getwalletinfo,getblockcount',
    });
  });
  afterAll(() => h.close());

  it('refuses a method off the list with -32601 (404 for 1.0, 200 for 2.0) without asking the node', async () => {
    h.node.clearRequests();
    const v1 = await call(h.url, 'stop');
    expect(v1.status).toBe(404);
    expect(v1.json().error).toEqual({ code: -32601, message: 'Method not found' });
    const v2 = await call(h.url, 'dumpprivkey', ['x'], { version: '2.0' });
    expect(v2.status).toBe(200);
    expect(v2.json().error.code).toBe(-32601);
    expect(h.node.requests).toHaveLength(0);
  });

  it('sends the node the call it checked when a key is written twice (Core reads the first, JSON.parse the last)', async () => {
    h.node.clearRequests();
    const res = await post(h.url, '{"jsonrpc":"1.0","id":1,"method":"stop","method":"getblockcount","params":[]}');
    expect(res.json()).toEqual({ result: h.node.tipHeight(), error: null, id: 1 });
    expect(h.node.requests).toHaveLength(1);
    expect(h.node.requests[0]?.body).not.toContain('stop');
    expect(JSON.parse(h.node.requests[0]?.body as string)).toEqual({ jsonrpc: '1.0', id: 1, method: 'getblockcount', params: [] });
    const refused = await post(h.url, '{"jsonrpc":"1.0","id":2,"method":"getblockcount","method":"stop","params":[]}');
    expect(refused.json().error.code).toBe(-32601);
    expect(h.node.requests).toHaveLength(1);
  });

  it('forwards only the allowed calls of a batch and keeps the order', async () => {
    h.node.clearRequests();
    const res = await post(h.url, [
      { jsonrpc: '1.0', id: 1, method: 'getblockcount' },
      { jsonrpc: '1.0', id: 2, method: 'stop' },
      { jsonrpc: '2.0', id: 3, method: 'getbestblockhash' },
      { jsonrpc: '2.0', id: 4, method: 'setban', params: ['1.2.3.4', 'add'] },
    ]);
    expect(res.status).toBe(200);
    const body = res.json() as { id: number; result?: unknown; error?: { code: number } | null }[];
    expect(body.map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect(body[0]!.result).toBe(h.node.tipHeight());
    expect(body[1]!.error!.code).toBe(-32601);
    expect(body[2]!.result).toBe(h.node.tipHash());
    expect(body[3]!.error!.code).toBe(-32601);
    expect(h.node.requests).toHaveLength(1);
    expect(JSON.parse(h.node.requests[0]!.body).map((c: { method: string }) => c.method)).toEqual(['getblockcount', 'getbestblockhash']);
  });

  // Core echoes an id as it was written (`1.50`, `1e2`, `-0`, 30 digits) and reads `1e400` as
  // out of range: re-serialized by JSON.stringify, the node would read `1.5`, `100`, `0`,
  // `1.2345678901234568e+29` and `null` (the parameter gone, Core's default in its place).
  it("sends the node a batch's forwarded elements as the client wrote them, numbers and ids included", async () => {
    h.node.clearRequests();
    const first = '{"jsonrpc":"1.0","id":1.50,"method":"getblockcount","params":[]}';
    const third = '{ "id" : 123456789012345678901234567890 , "method":"decodescript","params":["00", 1e400] }';
    const fourth = '{"jsonrpc":"2.0","id":-0,"method":"testmempoolaccept","params":[["00"],1e2]}';
    const res = await post(h.url, `[ ${first} ,{"id":2,"method":"stop"},\n${third},${fourth}]`);
    expect(res.status).toBe(200);
    expect(res.json()).toHaveLength(4);
    expect(h.node.requests).toHaveLength(1);
    expect(h.node.requests[0]?.body).toBe(`[${first},${third},${fourth}]`);
  });

  it('re-serializes a batch whose body has a key written twice (what the node runs is what was checked)', async () => {
    h.node.clearRequests();
    const res = await post(h.url, '[{"id":1,"method":"getblockcount"},{"id":2,"method":"stop","method":"getbestblockhash"}]');
    expect(res.json()).toEqual([
      { result: h.node.tipHeight(), error: null, id: 1 },
      { result: h.node.tipHash(), error: null, id: 2 },
    ]);
    expect(h.node.requests[0]?.body).toBe('[{"id":1,"method":"getblockcount"},{"id":2,"method":"getbestblockhash"}]');
  });

  it('applies per-user lists: the monitoring user only reads, the wallet user sends', async () => {
    const funded = h.node.fund('p2wpkh', 1_000_000n);
    const hex = signSpend([funded], [{ script: funded.script, amount: 990_000n }]);
    expect((await call(h.url, 'sendrawtransaction', [hex], { auth: basic('monitor', 'mon') })).json().error.code).toBe(-32601);
    expect((await call(h.url, 'getblockcount', [], { auth: basic('monitor', 'mon') })).json().result).toBe(h.node.tipHeight());
    expect((await call(h.url, 'getblock', [h.node.tipHash()], { auth: basic('monitor', 'mon') })).json().error.code).toBe(-32601);
    const sent = await call(h.url, 'sendrawtransaction', [hex], { auth: basic('wallet', 'wal') });
    expect(h.node.chain.mempool.has(sent.json().result)).toBe(true);
  });

  it.each([
    ['getblock', ['abcd'], 'blockhash'],
    ['getblock', [12345], 'blockhash'],
    ['getblock', ['00'.repeat(32), 4], 'verbosity'],
    ['getblock', { blockhash: '00'.repeat(32), nope: 1 }, 'nope'],
    ['getrawtransaction', ['zz'.repeat(32)], 'txid'],
    ['getrawtransaction', ['00'.repeat(32), 'yes'], 'verbosity'],
    ['getrawtransaction', ['00'.repeat(32), true, 'abc'], 'blockhash'],
    ['sendrawtransaction', ['abc'], 'hexstring'],
    ['sendrawtransaction', [42], 'hexstring'],
    // Strings Number() reads but Core's amount parser (ParseFixedPoint) does not: not amounts.
    ['sendrawtransaction', ['00', ''], 'maxfeerate'],
    ['sendrawtransaction', ['00', ' 0.1'], 'maxfeerate'],
    ['sendrawtransaction', ['00', '0x10'], 'maxfeerate'],
    ['sendrawtransaction', ['00', 0, '.5'], 'maxburnamount'],
    ['sendrawtransaction', ['00', '-1'], 'maxfeerate'],
    ['getblockhash', ['abc'], 'height'],
    ['getblockheader', [], 'blockhash'],
  ])('refuses %s %j with -32602 naming %s', async (method, params, name) => {
    h.node.clearRequests();
    const v1 = await call(h.url, method, params);
    expect(v1.status).toBe(500);
    expect(v1.json().error.code).toBe(-32602);
    expect(v1.json().error.message).toContain(`"${name}"`);
    const v2 = await call(h.url, method, params, { version: '2.0' });
    expect(v2.status).toBe(200);
    expect(h.node.requests).toHaveLength(0);
  });

  it('forwards well-formed parameters, named or positional, booleans or numbers', async () => {
    const funded = h.node.fund('p2tr', 1_000_000n);
    for (const params of [
      [funded.txid, true],
      [funded.txid, 2],
      { txid: funded.txid, verbose: 1 },
      [funded.txid, false, funded.blockHash],
    ]) {
      const res = await call(h.url, 'getrawtransaction', params);
      expect(res.status).toBe(200);
    }
    for (const verbosity of [0, 1, 2, 3, true, false])
      expect((await call(h.url, 'getblock', [funded.blockHash, verbosity])).status).toBe(200);
    // Amounts as numbers or as the strings Core reads (ParseFixedPoint: JSON's number grammar).
    for (const params of [
      ['00', 0.1],
      ['00', '0.10'],
      ['00', '1e-3'],
      ['00', '0', '2E+1'],
    ]) {
      h.node.clearRequests();
      expect((await call(h.url, 'sendrawtransaction', params)).json().error.code).not.toBe(-32602);
      expect(h.node.requests).toHaveLength(1);
    }
  });

  it('passes node errors and wallet paths through unchanged', async () => {
    const missing = await call(h.url, 'getblock', ['00'.repeat(32)]);
    expect(missing.status).toBe(500);
    expect(missing.json().error).toEqual({ code: -5, message: 'Block not found' });
    expect((await call(h.url, 'getwalletinfo', [], { path: '/wallet/testwallet' })).json().result.walletname).toBe('testwallet');
    expect((await call(h.url, 'getwalletinfo', [], { path: '/wallet/nope' })).json().error.code).toBe(-18);
  });
});

describe('cache of immutable answers', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ CACHE_MIN_CONFIRMATIONS: '2' });
  });
  afterAll(() => h.close());

  it('serves getblock verbosity 0 from the cache, byte-identical to the node', async () => {
    const hash = h.node.tipHash();
    await call(h.url, 'getblock', [hash, 0], { id: 'first' });
    h.node.clearRequests();
    for (const version of ['1.0', '2.0'] as const) {
      const cached = await call(h.url, 'getblock', [hash, 0], { id: 'c', version });
      const direct = await call(h.node.url, 'getblock', [hash, 0], { id: 'c', version, auth: basic(NODE_USER, NODE_PASSWORD) });
      expect(cached.text).toBe(direct.text);
      expect(cached.status).toBe(direct.status);
    }
    expect(h.node.requests).toHaveLength(2); // the two direct calls only
  });

  it('caches getrawtransaction hex only once the transaction is confirmed deep enough', async () => {
    const funded = h.node.fund('p2wpkh', 1_000_000n);
    const hex = signSpend([funded], [{ script: funded.script, amount: 990_000n }]);
    const txid = h.node.sendRawTransaction(hex);
    await call(h.url, 'getrawtransaction', [txid]);
    h.node.mine(2);
    const before = h.app.cache.size;
    await call(h.url, 'getrawtransaction', [txid]);
    for (let i = 0; i < 50 && h.app.cache.size === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(h.app.cache.size).toBe(before + 1);
    for (let i = 0; i < 50 && h.app.node.stats.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
    h.node.clearRequests();
    const res = await call(h.url, 'getrawtransaction', [txid, false], { id: 7 });
    expect(res.text).toBe(`{"result":"${hex}","error":null,"id":7}\n`);
    expect(h.node.requests).toHaveLength(0);
  });
});

describe('limits', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('answers 429 with Retry-After past the per-address rate', async () => {
    h = await startHarness({ RATE_LIMIT_PER_MINUTE: '3' });
    for (let i = 0; i < 3; i++) expect((await call(h.url, 'getblockcount')).status).toBe(200);
    const res = await call(h.url, 'getblockcount');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.json().error.code).toBe(-32603);
  });

  it('answers 413 past the body limit', async () => {
    h = await startHarness({ MAX_BODY_BYTES: '2048' });
    const res = await call(h.url, 'sendrawtransaction', ['00'.repeat(2048)]);
    expect(res.status).toBe(413);
  });

  it('refuses connections past the cap', async () => {
    h = await startHarness({ MAX_CONNECTIONS: '2' });
    const port = Number(new URL(h.url).port);
    const open = () =>
      new Promise<import('node:net').Socket>((resolve) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
      });
    const a = await open();
    const b = await open();
    const c = await open();
    const closed = await new Promise<boolean>((resolve) => {
      c.once('close', () => resolve(true));
      c.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
    });
    expect(closed).toBe(true);
    for (const s of [a, b, c]) s.destroy();
  });
});
