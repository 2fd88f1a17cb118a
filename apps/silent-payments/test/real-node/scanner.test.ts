import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, listen } from '@repo/service';
import { createApp as createProxy, loadConfig as loadProxyConfig, type ProxyApp } from '@repo/rpc-proxy';
import { createFundedWallet, createWallet, makeSilentPayment, startRegtestNode, type RegtestNode, type RegtestWallet } from '@repo/regtest';
import { plainScript, signSpend } from '@repo/chain-double';
import { startFakeRelay, waitFor, type FakeRelay } from '../support/fake-relay';
import { getJson, postJson, startService, type RunningService } from '../support/service';

const TOKEN = 'relay-publish-token';
const PROXY_USER = 'scanner';
const PROXY_PASSWORD = 'scanner-secret';

interface PaymentDetail {
  id: string;
  address: string;
  amount: number;
  txid: string;
  vout: number;
  block_height: number | null;
  confirmations: number;
  status: string;
}

/**
 * The scanner against a real Bitcoin Core 29 (regtest) through the rpc-proxy: a real payment,
 * built with the project's BIP-352 sender from real UTXOs and accepted by the node, is seen in
 * the mempool, confirmed, kept across a restart, and rolled back by a reorg made with
 * `invalidateblock` (docs/silent-payments.md, "Reorgs").
 */
describe('the scanner against a real bitcoind through the rpc-proxy', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  let proxy: ProxyApp;
  let proxyUrl: string;
  let proxyDir: string;
  let relay: FakeRelay;
  let dir: string;
  let running: RunningService | undefined;

  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node);
    proxyDir = mkdtempSync(join(tmpdir(), 'sp-real-proxy-'));
    proxy = createProxy(
      loadProxyConfig({
        DATA_DIR: proxyDir,
        BITCOIND_RPC_URL: node.url,
        BITCOIND_COOKIE_FILE: node.cookieFile,
        RPC_USER: PROXY_USER,
        RPC_PASSWORD: PROXY_PASSWORD,
      }),
      { logger: createSilentLogger() },
    );
    await proxy.start();
    proxyUrl = `http://127.0.0.1:${(await listen(proxy.servers.http, 0, '127.0.0.1')).port}`;
    relay = await startFakeRelay(TOKEN);
    dir = mkdtempSync(join(tmpdir(), 'sp-real-'));
  });
  afterAll(async () => {
    await running?.close();
    await relay?.close();
    proxy?.servers.http.closeAllConnections();
    await new Promise((r) => proxy?.servers.http.close(r));
    await proxy?.close();
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(proxyDir, { recursive: true, force: true });
  });

  const env = () => ({
    DATA_DIR: dir,
    CHAIN_RPC_URL: proxyUrl,
    CHAIN_RPC_USER: PROXY_USER,
    CHAIN_RPC_PASSWORD: PROXY_PASSWORD,
    RELAY_URL: relay.url,
    RELAY_PUBLISH_TOKEN: TOKEN,
  });
  const tip = () => node.rpc<number>('getblockcount');
  async function synced(): Promise<void> {
    const height = await tip();
    await waitFor(
      () => running!.service.scanner.status().scanned_height === height && running!.service.scanner.status().state === 'synced',
      20_000,
      `scan to ${height}`,
    );
  }
  const payment = (id: string) => getJson<PaymentDetail>(running!.url, `/payments/${id}`);
  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('finds a real payment in the mempool, confirms it, keeps it across a restart and rolls it back on a reorg', async () => {
    running = await startService(env());
    await synced();
    expect(await getJson(running.url, '/ready')).toMatchObject({ status: 200, body: { status: 'ready' } });
    const startHeight = await tip();
    expect(running.service.scanner.status().start_height).toBe(startHeight);
    const { address } = (await postJson<{ address: string }>(running.url, '/generate-address', { label: 'invoice-1', amount: 0.005 })).body;
    expect(address).toMatch(/^tsp1/);

    // A real payment: P2TR and P2WPKH inputs funded by the wallet, the BIP-352 output, signed, accepted by the node.
    const paid = await makeSilentPayment(node, wallet, { address, sats: 500_000n });
    const id = `${paid.txid}:${paid.vout}`;

    // 1. In the mempool: pending.
    await until(async () => (await payment(id)).status === 200, 'the pending payment');
    expect((await payment(id)).body).toMatchObject({
      id,
      address,
      amount: 0.005,
      txid: paid.txid,
      block_height: null,
      confirmations: 0,
      status: 'pending',
    });

    // 2. Mined: confirmed at that height, TransactionReceived and BlockScanned published.
    const [blockHash] = (await wallet.mine(1)) as [string];
    const height = await tip();
    await synced();
    await until(async () => (await payment(id)).body.status === 'confirmed', 'the confirmation');
    expect((await payment(id)).body).toMatchObject({ block_height: height, confirmations: 1, status: 'confirmed' });
    await waitFor(() => relay.events.some((e) => e.type === 'BlockScanned' && e.data.block_height === height), 10_000, 'BlockScanned');
    expect(relay.events.find((e) => e.type === 'TransactionReceived' && e.data.txid === paid.txid)?.data).toEqual({
      txid: paid.txid,
      amount: 0.005,
      address,
      block_height: height,
      confirmations: 1,
    });
    expect(relay.events.find((e) => e.type === 'BlockScanned' && e.data.block_height === height)?.data).toMatchObject({
      block_hash: blockHash,
      silent_payments_found: 1,
    });

    // 3. The service restarted on its data directory: the payment is kept, the scan resumes.
    await running.close();
    await wallet.mine(2);
    running = await startService(env());
    await synced();
    expect((await payment(id)).body).toMatchObject({ block_height: height, confirmations: 3, status: 'confirmed' });
    expect(running.service.scanner.status().start_height).toBe(startHeight);

    // 4. A reorg: the payment's block is invalidated, its transaction goes back to the mempool: pending again.
    await node.rpc('invalidateblock', [blockHash]);
    expect(await node.rpc('getrawmempool')).toContain(paid.txid);
    running.service.scanner.wake();
    await until(async () => (await payment(id)).body.status === 'pending', 'the rollback to pending');
    expect((await payment(id)).body).toMatchObject({ block_height: null, confirmations: 0, status: 'pending' });

    // Mined again on the new branch: confirmed at its new height.
    await wallet.mine(1);
    const newHeight = await tip();
    expect(newHeight).toBe(height);
    running.service.scanner.wake();
    await until(async () => (await payment(id)).body.status === 'confirmed', 'the confirmation on the new branch');
    const after = (await payment(id)).body;
    expect(after).toMatchObject({ block_height: newHeight, status: 'confirmed' });
    const newHash = await node.rpc<string>('getblockhash', [newHeight]);
    expect(newHash).not.toBe(blockHash);
    await waitFor(
      () => relay.events.some((e) => e.type === 'BlockScanned' && e.data.block_hash === newHash),
      10_000,
      'BlockScanned of the new branch',
    );

    // 5. Reorged out again, then replaced in the mempool by a spend of the same coins that pays
    // someone else (full RBF): the pending payment leaves the mempool unconfirmed and is removed.
    await node.rpc('invalidateblock', [newHash]);
    running.service.scanner.wake();
    await until(async () => (await payment(id)).body.status === 'pending', 'pending again');
    const total = paid.coins.reduce((sum, c) => sum + c.amount, 0n);
    const replacement = signSpend(paid.coins, [{ script: plainScript(9), amount: total - 20_000n }]);
    await node.rpc('sendrawtransaction', [replacement]);
    expect(await node.rpc('getrawmempool')).not.toContain(paid.txid);
    running.service.scanner.wake();
    await until(async () => (await payment(id)).status === 404, 'the payment removed');
    await wallet.mine(1);
    await synced();
    expect((await payment(id)).status).toBe(404);
    expect((await getJson<{ total: number }>(running.url, '/payments')).body.total).toBe(0);
  });

  it('on a fresh node still in its initial block download, waits, then starts at the tip once the node has synced', async () => {
    const fresh = await startRegtestNode();
    const freshDir = mkdtempSync(join(tmpdir(), 'sp-real-ibd-'));
    let service: RunningService | undefined;
    try {
      // Only the genesis block (of 2011): Core says initialblockdownload: true.
      expect(await fresh.rpc('getblockchaininfo')).toMatchObject({ blocks: 0, initialblockdownload: true });
      service = await startService({ DATA_DIR: freshDir, CHAIN_RPC_URL: fresh.url, CHAIN_RPC_COOKIE_FILE: fresh.cookieFile });
      const status = () => service!.service.scanner.status();
      await waitFor(() => status().state === 'initial_block_download', 10_000, 'the wait for the initial block download');
      expect(status()).toMatchObject({ start_height: null, node: { blocks: 0, initialblockdownload: true } });
      expect(await getJson(service.url, '/ready')).toMatchObject({ status: 200, body: { scanner: { state: 'initial_block_download' } } });
      // One block of now: the node leaves its initial block download, the scanner starts at that tip.
      await (await createWallet(fresh, 'fresh')).mine(1);
      await waitFor(() => status().state === 'synced', 10_000, 'synced');
      expect(status()).toMatchObject({ start_height: 1, scanned_height: 1, node: { blocks: 1, initialblockdownload: false } });
      expect((await getJson(service.url, '/ready')).status).toBe(200);
    } finally {
      await service?.close();
      await fresh.close();
      rmSync(freshDir, { recursive: true, force: true });
    }
  });
});
