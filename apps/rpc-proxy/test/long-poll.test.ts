import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, listen } from '@repo/service';
import { createApp, type ProxyApp } from '../src/app';
import { loadConfig } from '../src/config';
import { contract } from './support/contract';
import { CLIENT_PASSWORD, CLIENT_USER, post } from './support/helpers';

/**
 * A node that holds `waitfornewblock` until `releaseBlock()` (or for ever) and answers every
 * other call at once, as bitcoind does with a long poll in flight.
 */
async function startLongPollNode(): Promise<{ url: string; server: Server; releaseBlock(): void; held(): number; close(): Promise<void> }> {
  let waiting: (() => void)[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { id: unknown; method: string } | { id: unknown; method: string }[];
      if (Array.isArray(parsed)) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(parsed.map((c) => ({ result: 101, error: null, id: c.id }))));
        return;
      }
      const call = parsed;
      const answer = (result: unknown) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ result, error: null, id: call.id }));
      };
      if (call.method === 'waitfornewblock') waiting.push(() => answer({ hash: '11'.repeat(32), height: 102 }));
      else answer(101);
    });
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    releaseBlock() {
      const w = waiting;
      waiting = [];
      for (const done of w) done();
    },
    held: () => waiting.length,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('long polls (waitfornewblock)', () => {
  let node: Awaited<ReturnType<typeof startLongPollNode>>;
  let app: ProxyApp;
  let url: string;
  let dataDir: string;

  async function start(env: Record<string, string>): Promise<void> {
    node = await startLongPollNode();
    dataDir = mkdtempSync(join(tmpdir(), 'rpc-proxy-lp-'));
    app = createApp(
      loadConfig({
        DATA_DIR: dataDir,
        BITCOIND_RPC_URL: node.url,
        BITCOIND_RPC_USER: 'u',
        BITCOIND_RPC_PASSWORD: 'p',
        RPC_USER: CLIENT_USER,
        RPC_PASSWORD: CLIENT_PASSWORD,
        ...env,
      }),
      { logger: createSilentLogger() },
    );
    contract.attach(app.servers.http);
    url = `http://127.0.0.1:${(await listen(app.servers.http, 0, '127.0.0.1')).port}`;
  }
  afterEach(async () => {
    app.servers.http.closeAllConnections();
    await new Promise((r) => app.servers.http.close(r));
    await app.close();
    await node.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is allowed by default and outlives NODE_TIMEOUT_MS, without holding the slot of ordinary calls', async () => {
    // One ordinary slot and a 300 ms ordinary timeout: a long poll on them would block and fail.
    await start({ NODE_MAX_CONCURRENCY: '1', NODE_TIMEOUT_MS: '300', NODE_LONG_POLL_TIMEOUT_MS: '5000' });
    const poll = post(url, { jsonrpc: '1.0', id: 'lp', method: 'waitfornewblock', params: [5000] });
    while (node.held() === 0) await new Promise((r) => setTimeout(r, 10));
    // Ordinary calls pass while the long poll waits.
    for (let i = 0; i < 3; i++)
      expect((await post(url, { id: i, method: 'getblockcount', params: [] })).json()).toMatchObject({ result: 101 });
    // Past the ordinary timeout the long poll is still waiting, then answers the new block.
    await new Promise((r) => setTimeout(r, 500));
    expect(node.held()).toBe(1);
    node.releaseBlock();
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({ result: { hash: '11'.repeat(32), height: 102 }, error: null, id: 'lp' });
  });

  it('times out after its own timeout plus NODE_TIMEOUT_MS with -32603', async () => {
    await start({ NODE_TIMEOUT_MS: '200', NODE_LONG_POLL_TIMEOUT_MS: '300' });
    const started = Date.now();
    const answer = await post(url, { id: 1, method: 'waitfornewblock', params: [300] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(answer.json()).toMatchObject({ result: null, error: { code: -32603, message: 'node timed out after 500 ms' } });
  });

  it.each([
    [[], 'invalid parameter "timeout": waitfornewblock needs a timeout from 1 to 1000 ms through this proxy'],
    [[0], 'invalid parameter "timeout": waitfornewblock needs a timeout from 1 to 1000 ms through this proxy'],
    [[1001], 'invalid parameter "timeout": waitfornewblock needs a timeout from 1 to 1000 ms through this proxy'],
    [['10'], 'invalid parameter "timeout": expected an integer from 0 to 2147483647'],
  ])('answers -32602 for params %j', async (params, message) => {
    await start({ NODE_LONG_POLL_TIMEOUT_MS: '1000' });
    const answer = await post(url, { id: 1, method: 'waitfornewblock', params });
    expect(answer.json()).toMatchObject({ result: null, error: { code: -32602, message } });
    expect(node.held()).toBe(0);
  });

  it('refuses a long poll inside a batch and answers the rest of the batch', async () => {
    await start({});
    const answer = await post(url, [
      { id: 1, method: 'waitfornewblock', params: [1000] },
      { id: 2, method: 'getblockcount', params: [] },
    ]);
    expect(answer.json()).toEqual([
      { result: null, error: { code: -32602, message: 'waitfornewblock is a long poll: send it alone, not in a batch' }, id: 1 },
      { result: 101, error: null, id: 2 },
    ]);
  });
});
