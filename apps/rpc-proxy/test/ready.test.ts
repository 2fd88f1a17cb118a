import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChainDouble, type ChainDouble } from '@repo/chain-double';
import { createMemoryLogger, listen, type LogRecord } from '@repo/service';
import { itAsUnprivileged } from '@repo/service/testing';
import { createApp, type ProxyApp } from '../src/app';
import { contract } from './support/contract';
import { loadConfig } from '../src/config';
import { call, startGate, startHarness, startProxyProcess, until, type Harness, type ProxyProcess } from './support/helpers';

async function get(url: string, path: string, method = 'GET'): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { method });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

describe('GET /health and GET /ready', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('/health answers 200 while the process serves, whatever the node does', async () => {
    h = await startHarness({}, { initialBlocks: 1 });
    h.node.setBehaviour('down');
    expect(await get(h.url, '/health')).toEqual({ status: 200, body: { status: 'ok' } });
    expect((await get(h.url, '/health', 'HEAD')).status).toBe(200);
    expect((await fetch(`${h.url}/health`, { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('/ready: 200 with the node’s state when it answers an authenticated call, 503 with the reason otherwise', async () => {
    h = await startHarness({}, { initialBlocks: 3 });
    expect(await get(h.url, '/ready')).toEqual({
      status: 200,
      body: { status: 'ready', node: { chain: 'regtest', blocks: 3, headers: 3, initialblockdownload: false } },
    });
    h.node.setBehaviour('down');
    await new Promise((r) => setTimeout(r, 600)); // past the reuse of the last probe's answer
    expect(await get(h.url, '/ready')).toEqual({
      status: 503,
      body: { status: 'unready', reason: 'node-unreachable', message: expect.stringContaining('node unreachable') },
    });
    h.node.setBehaviour('busy');
    await new Promise((r) => setTimeout(r, 600));
    expect((await get(h.url, '/ready')).body.reason).toBe('node-busy');
    h.node.setBehaviour('normal');
    // A node in its initial block download answers: ready for the proxy, the state says so.
    h.node.setInitialBlockDownload({ headers: 500, progress: 0.1 });
    await new Promise((r) => setTimeout(r, 600));
    expect(await get(h.url, '/ready')).toMatchObject({ status: 200, body: { node: { initialblockdownload: true, headers: 500 } } });
  });

  it('/ready: 503 proxy-queue-full while the proxy’s own queue toward the node is full', async () => {
    // One slot, no queue: a call held at the node leaves no room for the probe.
    const gate = await startGate();
    try {
      h = await startHarness({ BITCOIND_RPC_URL: gate.url, NODE_MAX_CONCURRENCY: '1', NODE_QUEUE_LIMIT: '0' }, { initialBlocks: 1 });
      gate.target = h.node.url;
      const held = call(h.url, 'getblockcount');
      await until(() => gate.held === 1);
      expect(await get(h.url, '/ready')).toEqual({
        status: 503,
        body: { status: 'unready', reason: 'proxy-queue-full', message: 'proxy queue full: too many requests waiting for the node' },
      });
      gate.release(true);
      expect((await held).json().result).toBe(1);
      await new Promise((r) => setTimeout(r, 600)); // past the reuse of the last probe's answer
      expect((await get(h.url, '/ready')).status).toBe(200);
    } finally {
      await gate.close(); // the proxy is closed by afterEach
    }
  });

  it('/ready: 503 credentials-refused when the node refuses the proxy’s credentials', async () => {
    h = await startHarness({ BITCOIND_RPC_PASSWORD: 'wrong' }, { initialBlocks: 1 });
    expect(await get(h.url, '/ready')).toEqual({
      status: 503,
      body: { status: 'unready', reason: 'credentials-refused', message: "node rejected the proxy's credentials (HTTP 401)" },
    });
  });
});

describe('a node cookie file the proxy cannot read', () => {
  let dir: string;
  let node: ChainDouble;
  let app: ProxyApp;
  let url: string;
  let lines: LogRecord[];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'node-cookie-'));
    node = await startChainDouble({ cookieFile: join(dir, '.cookie'), initialBlocks: 1, authFailureDelayMs: 0 });
    const memory = createMemoryLogger('debug');
    lines = memory.lines;
    app = createApp(
      loadConfig({
        DATA_DIR: join(dir, 'proxy'),
        BITCOIND_RPC_URL: node.url,
        BITCOIND_COOKIE_FILE: join(dir, '.cookie'),
        RPC_USER: 'a',
        RPC_PASSWORD: 'b',
      }),
      {
        logger: memory.logger,
      },
    );
    await app.start();
    contract.attach(app.servers.http);
    url = `http://127.0.0.1:${(await listen(app.servers.http, 0, '127.0.0.1')).port}`;
  });
  afterEach(async () => {
    app.servers.http.closeAllConnections();
    await new Promise((r) => app.servers.http.close(r));
    await app.close();
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs the path and errno, says so in -32603 and in /ready, and recovers once it can read it', async () => {
    expect((await call(url, 'getblockcount', [], { auth: `Basic ${Buffer.from('a:b').toString('base64')}` })).json().result).toBe(1);
    // The node's cookie path turns into something unreadable (a directory: EISDIR, even for root).
    rmSync(join(dir, '.cookie'));
    mkdirSync(join(dir, '.cookie'));
    await new Promise((r) => setTimeout(r, 1_100)); // the cookie is re-checked at most once a second
    const auth = `Basic ${Buffer.from('a:b').toString('base64')}`;
    // The proxy has no cookie to send: the node answers 401.
    const v1 = await call(url, 'getblockcount', [], { auth, id: 5 });
    expect(v1.status).toBe(500);
    expect(v1.json()).toEqual({
      result: null,
      error: {
        code: -32603,
        message: "proxy cannot read the node's cookie file (EISDIR): the node refused the call without it (HTTP 401)",
      },
      id: 5,
    });
    const logged = lines.filter((l) => l.code === 'EISDIR');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: 50,
      cookieFile: join(dir, '.cookie'),
      msg: expect.stringContaining('cannot read the node cookie file (EISDIR)'),
    });
    const ready = await get(url, '/ready');
    expect(ready).toEqual({ status: 503, body: { status: 'unready', reason: 'cookie-unreadable', message: v1.json().error.message } });
    // Readable again: a new cookie is written where the proxy looks.
    rmSync(join(dir, '.cookie'), { recursive: true });
    node.rotateCookie();
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await call(url, 'getblockcount', [], { auth })).json().result).toBe(1);
    expect(lines.some((l) => l.msg === 'node cookie file readable again' && l.was === 'EISDIR')).toBe(true);
  });
});

/**
 * The defect operators met: the node's data directory is closed to the proxy's user (mode 0700,
 * another uid), so the cookie's stat fails with EACCES. Run as the real process: as root (which
 * reads anything), the proxy is started as uid/gid 65534; otherwise the directory is made 0000.
 */
describe('the node cookie in a directory the proxy’s user cannot enter (EACCES)', () => {
  itAsUnprivileged('is logged with the path and EACCES, and the client reads that the proxy cannot read the cookie', async (user) => {
    const dir = mkdtempSync(join(tmpdir(), 'node-datadir-'));
    chmodSync(dir, 0o755);
    const datadir = join(dir, 'bitcoind');
    const cookieFile = join(datadir, '.cookie');
    const node = await startChainDouble({ cookieFile, initialBlocks: 1, authFailureDelayMs: 0 });
    const root = process.getuid?.() === 0;
    chmodSync(datadir, root ? 0o700 : 0o000);
    const proxyData = join(dir, 'proxy');
    mkdirSync(proxyData, { mode: 0o777 });
    chmodSync(proxyData, 0o777);
    let proxy: ProxyProcess | undefined;
    try {
      proxy = await startProxyProcess(
        {
          DATA_DIR: proxyData,
          BITCOIND_RPC_URL: node.url,
          BITCOIND_COOKIE_FILE: cookieFile,
          RPC_USER: 'a',
          RPC_PASSWORD: 'b',
        },
        { user },
      );
      const { logs, url } = proxy;
      const answer = await call(url, 'getblockchaininfo', [], { auth: `Basic ${Buffer.from('a:b').toString('base64')}`, id: 1 });
      expect(answer.json().error).toEqual({
        code: -32603,
        message: "proxy cannot read the node's cookie file (EACCES): the node refused the call without it (HTTP 401)",
      });
      // Log lines are gathered for a few ms before they are written (docs/README.md, "Logging"): wait for it.
      for (const until = Date.now() + 5_000; !logs.some((l) => l.code === 'EACCES') && Date.now() < until;)
        await new Promise((r) => setTimeout(r, 20));
      expect(logs).toContainEqual(
        expect.objectContaining({
          level: 50,
          code: 'EACCES',
          cookieFile,
          msg: expect.stringContaining('cannot read the node cookie file (EACCES)'),
        }),
      );
      expect((await get(url, '/ready')).body).toMatchObject({ status: 'unready', reason: 'cookie-unreadable' });
    } finally {
      await proxy?.stop();
      chmodSync(datadir, 0o700);
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
