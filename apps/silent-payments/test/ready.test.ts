import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChainDouble } from '@repo/chain-double';
import { createMemoryLogger, createSilentLogger, listen } from '@repo/service';
import { createApp as createProxy, loadConfig as loadProxyConfig, type ProxyApp } from '@repo/rpc-proxy';
import { waitFor } from './support/fake-relay';
import { getJson, startService, useChainDouble, type RunningService } from './support/service';

describe('the node in its initial block download, GET /ready', () => {
  const chain = useChainDouble('sp-ready-', { initialBlocks: 101 });
  let node: ChainDouble;
  let running: RunningService | undefined;
  beforeEach(() => {
    ({ node } = chain);
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  const env = (extra: Record<string, string> = {}) => chain.env(extra);
  const status = () => running!.service.scanner.status();

  it('waits for initialblockdownload: false before taking the tip as start height, saying so with the node’s progress', async () => {
    node.setInitialBlockDownload({ headers: 900, progress: 0.125 });
    const { logger, lines } = createMemoryLogger('info');
    running = await startService(env(), { logger });
    await waitFor(() => status().state === 'initial_block_download', 5_000, 'the wait for the initial block download');
    expect(status()).toMatchObject({
      start_height: null,
      scanned_height: null,
      node: { blocks: 101, headers: 900, initialblockdownload: true },
    });
    const waiting = lines.find((l) => String(l.msg).startsWith("waiting for the node's initial block download"));
    expect(waiting).toMatchObject({ blocks: 101, headers: 900, verificationprogress: 0.125, start_height: 'the tip once synced' });
    // Reachable and authenticated: ready, saying that the scanner waits.
    const ready = await getJson(running.url, '/ready');
    expect(ready).toEqual({
      status: 200,
      body: {
        status: 'ready',
        scanner: { state: 'initial_block_download', scanned_height: null, tip_height: 101 },
        message: 'the node is in its initial block download (101 of 900 blocks, verification progress 0.125): the scanner waits',
        node: { blocks: 101, headers: 900, verificationprogress: 0.125, initialblockdownload: true },
      },
    });
    expect((await getJson(running.url, '/health')).status).toBe(200);

    // The node syncs further, then leaves its initial block download: the start is the tip then.
    node.mine(5);
    node.setInitialBlockDownload(undefined);
    await waitFor(() => status().state === 'synced', 5_000, 'synced');
    expect(status()).toMatchObject({ start_height: 106, scanned_height: 106 });
    expect(await getJson(running.url, '/ready')).toMatchObject({
      status: 200,
      body: { status: 'ready', scanner: { state: 'synced', scanned_height: 106 } },
    });
  });

  it('asks a node in its initial block download at SCAN_POLL_INTERVAL_MS, not at the mempool interval', async () => {
    node.setInitialBlockDownload({ headers: 900, progress: 0.125 });
    running = await startService(env({ SCAN_POLL_INTERVAL_MS: '400', SCAN_MEMPOOL_INTERVAL_MS: '10' }));
    await waitFor(() => status().state === 'initial_block_download', 5_000, 'the wait for the initial block download');
    node.clearRequests();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const asked = node.requests.filter((r) => r.body.includes('getblockchaininfo')).length;
    // Every 400 ms: 2 or 3 in a second (every 10 ms would be about 100).
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(4);
    node.setInitialBlockDownload(undefined);
    await waitFor(() => status().state === 'synced', 5_000, 'synced');
  });

  it('honours SP_START_HEIGHT once the node is synced', async () => {
    node.setInitialBlockDownload({ headers: 300, progress: 0.5 });
    running = await startService(env({ SP_START_HEIGHT: '90' }));
    await waitFor(() => status().state === 'initial_block_download', 5_000, 'the wait');
    expect(status().start_height).toBeNull();
    node.setInitialBlockDownload(undefined);
    await waitFor(() => status().state === 'synced', 5_000, 'synced');
    expect(status()).toMatchObject({ start_height: 90, scanned_height: 101 });
  });

  it('with SP_START_HEIGHT, scans a node that says it is in its initial block download with its blocks complete (a tip older than -maxtipage)', async () => {
    node.setInitialBlockDownload({ headers: 101, progress: 0.99 });
    running = await startService(env({ SP_START_HEIGHT: '95' }));
    await waitFor(() => status().state === 'synced', 5_000, 'synced');
    expect(status()).toMatchObject({
      start_height: 95,
      scanned_height: 101,
      node: { blocks: 101, headers: 101, initialblockdownload: true },
    });
    node.setInitialBlockDownload(undefined);
  });

  it('a start height once taken is kept: a node back in its initial block download is scanned along, and /ready says so', async () => {
    running = await startService(env());
    await waitFor(() => status().state === 'synced', 5_000, 'synced');
    node.setInitialBlockDownload({ headers: 200, progress: 0.9 });
    node.mine(1);
    running.service.scanner.wake();
    await waitFor(() => status().scanned_height === 102, 5_000, 'block 102');
    expect(status().start_height).toBe(101);
    expect(await getJson(running.url, '/ready')).toMatchObject({
      status: 200,
      body: {
        node: { initialblockdownload: true },
        message:
          'the node is in its initial block download (102 of 200 blocks, verification progress 0.9): the scanner follows the blocks it has',
      },
    });
  });

  it('/ready: 503 node-unreachable, credentials-refused; 200 without a scanner', async () => {
    running = await startService(env());
    await waitFor(() => status().state === 'synced', 5_000, 'synced');
    expect((await getJson(running.url, '/ready')).status).toBe(200);
    node.setBehaviour('down');
    running.service.scanner.wake();
    await waitFor(() => status().state === 'retrying', 5_000, 'retrying');
    expect(await getJson(running.url, '/ready')).toMatchObject({
      status: 503,
      body: { status: 'unready', reason: 'node-unreachable', message: expect.stringContaining('unreachable') },
    });
    await running.close();
    node.setBehaviour('normal');
    running = await startService(env({ CHAIN_RPC_PASSWORD: 'wrong' }));
    await waitFor(() => status().state === 'retrying', 5_000, 'retrying');
    expect(await getJson(running.url, '/ready')).toMatchObject({
      status: 503,
      body: { reason: 'credentials-refused', message: 'chain node answered HTTP 401: authentication failed' },
    });
    await running.close();
    running = await startService(env({ SCANNER_ENABLED: 'false' }));
    expect(await getJson(running.url, '/ready')).toEqual({ status: 200, body: { status: 'ready', scanner: { enabled: false } } });
  });

  it('/ready through the rpc-proxy: credentials-refused for the proxy’s 401, node-unavailable while the node behind it is down', async () => {
    const proxyDir = mkdtempSync(join(tmpdir(), 'sp-ready-proxy-'));
    const proxy: ProxyApp = createProxy(
      loadProxyConfig({
        DATA_DIR: proxyDir,
        BITCOIND_RPC_URL: node.url,
        BITCOIND_RPC_USER: chain.user,
        BITCOIND_RPC_PASSWORD: chain.password,
        RPC_USER: 'sp',
        RPC_PASSWORD: 'sp-secret',
        AUTH_FAILURE_DELAY_MS: '0',
      }),
      { logger: createSilentLogger() },
    );
    await proxy.start();
    const proxyUrl = `http://127.0.0.1:${(await listen(proxy.servers.http, 0, '127.0.0.1')).port}`;
    try {
      running = await startService(env({ CHAIN_RPC_URL: proxyUrl, CHAIN_RPC_USER: 'sp', CHAIN_RPC_PASSWORD: 'nope' }));
      await waitFor(() => status().state === 'retrying', 5_000, 'retrying');
      expect(await getJson(running.url, '/ready')).toMatchObject({
        status: 503,
        body: { reason: 'credentials-refused', message: 'chain node answered HTTP 401: incorrect credentials' },
      });
      await running.close();
      running = await startService(env({ CHAIN_RPC_URL: proxyUrl, CHAIN_RPC_USER: 'sp', CHAIN_RPC_PASSWORD: 'sp-secret' }));
      await waitFor(() => status().state === 'synced', 5_000, 'synced');
      node.setBehaviour('down');
      running.service.scanner.wake();
      await waitFor(() => status().state === 'retrying', 5_000, 'retrying');
      expect(await getJson(running.url, '/ready')).toMatchObject({
        status: 503,
        body: { reason: 'node-unavailable', message: expect.stringContaining('node unreachable') },
      });
    } finally {
      await running?.close();
      running = undefined;
      proxy.servers.http.closeAllConnections();
      await new Promise((r) => proxy.servers.http.close(r));
      await proxy.close();
      rmSync(proxyDir, { recursive: true, force: true });
    }
  });
});
