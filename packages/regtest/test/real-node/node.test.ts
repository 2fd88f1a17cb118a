import { createServer, type AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { createReceiver, scanInputsFromRpc, type RpcVin } from '@repo/bip352';
import {
  createFundedWallet,
  makeSilentPayment,
  newSilentPaymentReceiver,
  NodeRpcError,
  startRegtestNode,
  type RegtestNode,
  type RegtestWallet,
} from '../../src';

describe('a throw-away regtest node', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node);
  });
  afterAll(() => node?.close());

  it('runs regtest with the txindex, cookie authentication on a port of its own', async () => {
    const info = await node.rpc<{ chain: string; blocks: number }>('getblockchaininfo');
    expect(info.chain).toBe('regtest');
    expect(info.blocks).toBe(101);
    expect(await node.rpc('getindexinfo')).toMatchObject({ txindex: { synced: expect.any(Boolean) } });
    expect(readFileSync(node.cookieFile, 'utf8')).toMatch(/^__cookie__:[0-9a-f]{64}$/);
    const refused = await node.post('{"method":"getblockcount"}', { auth: null });
    expect(refused.status).toBe(401);
    await expect(node.rpc('nosuchmethod')).rejects.toEqual(expect.objectContaining({ code: -32601 }));
    await expect(node.rpc('nosuchmethod')).rejects.toBeInstanceOf(NodeRpcError);
  });

  it('gives the wallet spendable coins', async () => {
    expect(await wallet.balance()).toBe(50);
    const address = await wallet.newAddress();
    const out = await wallet.fund(address, 123_456n);
    const tx = await node.rpc<{ vout: Array<{ value: number; n: number }> }>('getrawtransaction', [out.txid, 1]);
    expect(tx.vout.find((o) => o.n === out.vout)?.value).toBe(0.00123456);
  });

  it('makes a silent payment the receiver finds, accepted by the node', async () => {
    const { address, scanPriv, spendPub } = newSilentPaymentReceiver();
    const payment = await makeSilentPayment(node, wallet, { address, sats: 250_000n });
    expect(await node.rpc('getrawmempool')).toContain(payment.txid);
    expect(payment.coins.map((c) => c.kind)).toEqual(['p2tr', 'p2wpkh']);
    await wallet.mine(1);
    const tx = await node.rpc<{ vin: RpcVin[]; vout: Array<{ n: number; value: number; scriptPubKey: { hex: string; type: string } }> }>(
      'getrawtransaction',
      [payment.txid, 2],
    );
    expect(tx.vout[0]).toMatchObject({ value: 0.0025, scriptPubKey: { type: 'witness_v1_taproot' } });
    const receiver = createReceiver({ scanPriv, spendPub });
    const found = receiver.scanTransaction(
      scanInputsFromRpc(tx.vin),
      tx.vout.map((o) => ({ index: o.n, script: Buffer.from(o.scriptPubKey.hex, 'hex') })),
    );
    expect(found).toEqual([expect.objectContaining({ index: 0, xonly: payment.outputKey, label: null })]);
  });

  it('stops, restarts on the same datadir and port with a new cookie, and keeps the chain', async () => {
    const before = readFileSync(node.cookieFile, 'utf8');
    const tip = await node.rpc<string>('getbestblockhash');
    const pid = node.pid;
    await node.stop();
    expect(node.pid).toBeUndefined();
    expect(existsSync(node.cookieFile)).toBe(false);
    await expect(fetch(node.url, { method: 'POST', body: '{}' })).rejects.toThrow();
    await node.start();
    expect(node.pid).not.toBe(pid);
    expect(readFileSync(node.cookieFile, 'utf8')).not.toBe(before);
    expect(await node.rpc('getbestblockhash')).toBe(tip);
    await node.rpc('loadwallet', [wallet.name]);
    expect(await wallet.balance()).toBeGreaterThan(0);
  });
});

describe('a port taken between choosing it and binding it', () => {
  it('a start on a taken port fails saying so; a new node moves to another free port', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as AddressInfo).port;
    const node = await startRegtestNode({ rpcPort: taken });
    try {
      expect(node.rpcPort).not.toBe(taken);
      expect(await node.rpc('getblockcount')).toBe(0);
      const port = node.rpcPort;
      await node.stop();
      const second = createServer();
      await new Promise<void>((r) => second.listen(port, '127.0.0.1', r));
      await expect(node.start()).rejects.toThrow(/Unable to start HTTP server/);
      await new Promise((r) => second.close(r));
      await node.start();
      expect(node.rpcPort).toBe(port);
    } finally {
      await new Promise((r) => blocker.close(r));
      await node.close();
    }
  });
});
