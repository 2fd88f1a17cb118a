import type { Socket } from 'node:net';
import { holdSlowConnections, rawExchange } from '@repo/http/testing';
import {
  basic,
  CLIENT_PASSWORD,
  CLIENT_USER,
  NODE_PASSWORD,
  NODE_USER,
  post,
  startHarness,
  startProxyProcess,
  until,
  type Harness,
} from './support/helpers';

// docs/rpc-proxy.md, "Limits": one address cannot take every slot, slow requests meet deadlines,
// parsing is bounded, protocol errors get a JSON-RPC envelope.
describe('rpc-proxy hardening', () => {
  let h: Harness;
  let port: number;
  const held: Socket[] = [];
  const AUTH = `Authorization: ${basic(CLIENT_USER, CLIENT_PASSWORD)}\r\n`;
  const start = async (env: Record<string, string> = {}) => {
    h = await startHarness(env);
    port = Number(new URL(h.url).port);
  };
  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    await h.close();
  });
  const getblockcount = (localAddress: string) => {
    const body = '{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}';
    return rawExchange(
      port,
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${AUTH}Content-Length: ${body.length}\r\n\r\n${body}`,
      { localAddress, timeoutMs: 5_000 },
    );
  };

  it('an address holding more slow-body connections than its cap leaves another address answered at once (default caps)', async () => {
    // Body slots for all of them (a quarter of 4000 per address): here only the connection cap acts,
    // 500 per address (MAX_CONNECTIONS_PER_IP) of 1000 in all, the last 100 kept for new addresses.
    await start({ MAX_CONCURRENT_BODIES: '4000' });
    held.push(...(await holdSlowConnections(port, 520, '127.0.0.2', '/', 100_000, AUTH)));
    await until(() => held.filter((s) => !s.destroyed).length <= 500, 'the connections past the cap closed', 20_000);
    expect(h.app.connections.count('127.0.0.2')).toBe(500);
    const r = await getblockcount('127.0.0.3');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ result: 101, error: null });
  });

  it('answers 408 to a slow body once REQUEST_TIMEOUT_MS has passed', async () => {
    await start({ REQUEST_TIMEOUT_MS: '500', HEADERS_TIMEOUT_MS: '300' });
    const r = await rawExchange(port, `POST / HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Length: 1000\r\n\r\n{`, { timeoutMs: 5_000 });
    expect(r.status).toBe(408);
    expect(r.ms).toBeLessThan(3_000);
    expect(JSON.parse(r.body)).toMatchObject({ result: null, id: null, error: { message: expect.stringMatching(/timeout/) } });
  });

  it('answers headers over 16 KB with 431 and a malformed request line with 400, both as JSON-RPC envelopes', async () => {
    await start();
    const big = await rawExchange(port, `POST / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ result: null, error: { code: -32600, message: 'request headers too large' }, id: null });
    const bad = await rawExchange(port, 'POST\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ result: null, error: { code: -32600, message: 'malformed HTTP request' }, id: null });
  });

  // An operator's NODE_OPTIONS=--max-http-header-size: the front end reads plain heads by hand,
  // and must keep to the same limit as node:http (431), not to Node's default.
  it('keeps to the process header limit (--max-http-header-size) for heads the front end reads', async () => {
    await start();
    const proxy = await startProxyProcess(
      {
        BITCOIND_RPC_URL: h.node.url,
        BITCOIND_RPC_USER: NODE_USER,
        BITCOIND_RPC_PASSWORD: NODE_PASSWORD,
        RPC_USER: CLIENT_USER,
        RPC_PASSWORD: CLIENT_PASSWORD,
      },
      { nodeArgs: ['--max-http-header-size=2048'] },
    );
    try {
      const body = '{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}';
      const padded = (pad: number) =>
        rawExchange(
          Number(new URL(proxy.url).port),
          `POST / HTTP/1.1\r\nHost: x\r\n${AUTH}X-Pad: ${'a'.repeat(pad)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
      const within = await padded(1_000);
      expect([within.status, JSON.parse(within.body).result]).toEqual([200, 101]);
      const over = await padded(3_000);
      expect(over.status).toBe(431);
      expect(JSON.parse(over.body)).toEqual({ result: null, error: { code: -32600, message: 'request headers too large' }, id: null });
    } finally {
      await proxy.stop();
    }
  });

  it('answers JSON nested deeper than Core accepts as a parse error, before parsing it', async () => {
    await start();
    const r = await post(h.url, `${'['.repeat(600)}${']'.repeat(600)}`);
    expect(r.status).toBe(500);
    expect(r.json()).toMatchObject({ error: { code: -32700 } });
  });

  it('answers 503 past MAX_CONCURRENT_BODIES authenticated bodies being read, one address getting a quarter; a request read whole takes none', async () => {
    await start({ MAX_CONCURRENT_BODIES: '4' });
    // One address gets one slot of four: its other slow bodies are refused (503, closed).
    const first = await holdSlowConnections(port, 4, '127.0.0.2', '/', 1_000, AUTH);
    held.push(...first);
    expect(first.length).toBe(1);
    expect((await getblockcount('127.0.0.3')).status).toBe(200);
    for (const from of ['127.0.0.4', '127.0.0.5', '127.0.0.6']) held.push(...(await holdSlowConnections(port, 1, from, '/', 1_000, AUTH)));
    // Every slot is taken: a body still on its way is refused at once.
    const r = await rawExchange(port, `POST / HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Length: 100\r\n\r\n{`, {
      localAddress: '127.0.0.3',
      timeoutMs: 5_000,
    });
    expect(r.status).toBe(503);
    expect(r.text).toMatch(/retry-after: 1/i);
    expect(r.text).toMatch(/connection: close/i);
    // A request that arrived whole is read already (docs/rpc-proxy.md, "Limits"): it needs no slot.
    expect((await getblockcount('127.0.0.3')).status).toBe(200);
    for (const s of held.splice(0)) s.destroy();
    await new Promise((res) => setTimeout(res, 100));
    held.push(...(await holdSlowConnections(port, 1, '127.0.0.3', '/', 1_000, AUTH)));
    expect(held.length).toBe(1);
  });

  it('still accepts a 4 MB transaction (8 MB of hex) in sendrawtransaction', async () => {
    await start();
    const r = await post(h.url, { jsonrpc: '1.0', id: 1, method: 'sendrawtransaction', params: ['00'.repeat(4_000_000)] });
    expect(r.status).not.toBe(413);
    expect(r.status).not.toBe(503);
  });
});
