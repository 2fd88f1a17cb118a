import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createFundedWallet, freePort, makeSilentPayment, startRegtestNode, type RegtestNode, type RegtestWallet } from '@repo/regtest';
import { eventually, startService, type ServiceProcess } from '../support/processes';
import { subscribeToRelay, type RelaySubscriber } from '../support/relay-subscriber';

/**
 * The payment path with a real Bitcoin Core 29 (regtest): bitcoind → rpc-proxy → silent-payments
 * scanner → relay → a WebSocket client, every service a real process. The payment is built with
 * the project's BIP-352 sender from the node wallet's real UTXOs and accepted by the node.
 */
describe('a real payment, from the node to a relay client', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  const services: ServiceProcess[] = [];
  const ports: Record<string, number> = {};
  let proxy: ServiceProcess;
  let subscriber: RelaySubscriber | undefined;

  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node);
    for (const name of ['proxy', 'relayWs', 'relayHttp', 'payments']) ports[name] = await freePort();
    const publishToken = randomBytes(32).toString('hex');
    proxy = await startService(
      'rpc-proxy',
      'rpc-proxy',
      { PORT: String(ports.proxy), BITCOIND_RPC_URL: node.url, BITCOIND_COOKIE_FILE: node.cookieFile },
      'rpc-proxy listening',
    );
    services.push(proxy);
    services.push(
      await startService(
        'relay',
        'relay',
        {
          WS_PORT: String(ports.relayWs),
          HTTP_PORT: String(ports.relayHttp),
          RELAY_ID: 'relay-real',
          RELAY_PUBLISH_TOKEN: publishToken,
          RELAY_PAYMENTS_PUBLIC: 'true',
        },
        'relay listening',
      ),
    );
    services.push(
      await startService(
        'silent-payments',
        'silent-payments',
        {
          PORT: String(ports.payments),
          SP_NETWORK: 'regtest',
          SCAN_POLL_INTERVAL_MS: '200',
          CHAIN_RPC_URL: `http://127.0.0.1:${ports.proxy}`,
          CHAIN_RPC_COOKIE_FILE: join(proxy.dataDir, '.cookie'),
          RELAY_URL: `ws://127.0.0.1:${ports.relayWs}`,
          RELAY_PUBLISH_TOKEN: publishToken,
        },
        'silent-payments listening',
      ),
    );
    subscriber = await subscribeToRelay(`ws://127.0.0.1:${ports.relayWs}`, ['TransactionReceived', 'BlockScanned']);
  }, 120_000);

  afterAll(async () => {
    subscriber?.close();
    const codes = await Promise.all(services.reverse().map((s) => s.stop()));
    await node?.close();
    expect(codes).toEqual(codes.map(() => 0));
  });

  it('both chain-facing services are ready against the node', async () => {
    const proxyReady = await eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${ports.proxy}/ready`);
        return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : undefined;
      },
      10_000,
      'the proxy ready',
    );
    expect(proxyReady).toEqual({ status: 'ready', node: { chain: 'regtest', blocks: 101, headers: 101, initialblockdownload: false } });
    await eventually(
      async () => ((await fetch(`http://127.0.0.1:${ports.payments}/ready`)).status === 200 ? true : undefined),
      10_000,
      'silent-payments ready',
    );
  });

  it('the client receives TransactionReceived and BlockScanned for a real payment to a generated address', async () => {
    const generated = await fetch(`http://127.0.0.1:${ports.payments}/generate-address`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'invoice-real', amount: 0.0007 }),
    });
    expect(generated.status).toBe(201);
    const { address } = (await generated.json()) as { address: string };

    const paid = await makeSilentPayment(node, wallet, { address, sats: 70_000n });
    // Pending first, from the mempool.
    const pending = await eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${ports.payments}/payments/${paid.txid}:${paid.vout}`);
        return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : undefined;
      },
      20_000,
      'the pending payment',
    );
    expect(pending).toMatchObject({ status: 'pending', amount: 0.0007, address });

    const [blockHash] = (await wallet.mine(1)) as [string];
    const height = await node.rpc<number>('getblockcount');
    const events = await subscriber!.paymentEvents(paid.txid, blockHash, 'the events at the client');
    expect(events.tx).toHaveLength(1);
    expect(events.tx[0]!.data).toEqual({ txid: paid.txid, amount: 0.0007, address, block_height: height, confirmations: 1 });
    expect(events.block).toHaveLength(1);
    const nTx = (await node.rpc<{ nTx: number }>('getblock', [blockHash, 1])).nTx;
    expect(events.block[0]!.data).toEqual({
      block_height: height,
      block_hash: blockHash,
      transactions_count: nTx,
      silent_payments_found: 1,
    });
  });
});
