import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWallet, makeSilentPayment, startRegtestNode } from '@repo/regtest';
import { plainScript, signSpend } from '@repo/chain-double';
import { waitFor } from '../support/fake-relay';
import { startRealNodeStack, until, type RealNodeStack } from '../support/real-node';
import { getJson, postJson, startService, syncedTo, type RunningService } from '../support/service';

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
  let stack: RealNodeStack;
  let running: RunningService | undefined;

  beforeAll(async () => {
    stack = await startRealNodeStack({ name: 'sp-real', proxyUser: PROXY_USER, proxyPassword: PROXY_PASSWORD });
  });
  afterAll(async () => {
    await running?.close();
    await stack?.close();
  });

  const tip = () => stack.node.rpc<number>('getblockcount');
  const synced = async () => syncedTo(running!, await tip(), 20_000);
  const payment = (id: string) => getJson<PaymentDetail>(running!.url, `/payments/${id}`);

  it('finds a real payment in the mempool, confirms it, keeps it across a restart and rolls it back on a reorg', async () => {
    const { node, wallet, relay } = stack;
    running = await startService(stack.env());
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
    running = await startService(stack.env());
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
