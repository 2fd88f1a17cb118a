import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import Client from 'bitcoin-core';
import { createFundedWallet, requireBitcoind, startRegtestNode, type RegtestNode } from '@repo/regtest';
import { CLIENT_PASSWORD, CLIENT_USER, startProxy, type RealProxy } from '../support/real-node';

const run = promisify(execFile);

/** Clients we did not write, through the proxy with its default settings, against a real Bitcoin Core (issue 66). */
describe('real clients through the proxy', () => {
  let node: RegtestNode;
  let proxy: RealProxy;

  beforeAll(async () => {
    node = await startRegtestNode();
    await createFundedWallet(node);
    // Two wallets: bitcoin-cli -getinfo then lists each one's balance (listwallets, then getbalances per wallet).
    await node.rpc('createwallet', ['second']);
    proxy = await startProxy(node);
  });
  afterAll(async () => {
    await proxy?.close();
    await node?.close();
  });

  it("answers 400 concurrent calls of the npm bitcoin-core client with Core's results", async () => {
    // Core's own answers, asked one at a time (400 at once straight to Core can meet its -rpcworkqueue on a busy machine:
    // HTTP 503; the proxy keeps the node within what it takes and queues the rest).
    const [count, best] = [await node.rpc('getblockcount'), await node.rpc('getbestblockhash')];
    const client = new Client({ host: proxy.url, username: CLIENT_USER, password: CLIENT_PASSWORD, timeout: 120_000 });
    const viaProxy = await Promise.all(Array.from({ length: 400 }, (_, i) => client.command(i % 2 ? 'getblockcount' : 'getbestblockhash')));
    expect(viaProxy).toEqual(Array.from({ length: 400 }, (_, i) => (i % 2 ? count : best)));
    expect(proxy.app.connections.refused).toBe(0);
  }, 120_000);

  it('shows the Balances of bitcoin-cli -getinfo (the read-only wallet calls it needs are allowed)', async () => {
    const cli = join(dirname(requireBitcoind()), 'bitcoin-cli');
    const args = ['-regtest', '-rpcconnect=127.0.0.1', `-rpcport=${new URL(proxy.url).port}`, `-rpcuser=${CLIENT_USER}`];
    const { stdout } = await run(cli, [...args, `-rpcpassword=${CLIENT_PASSWORD}`, '-getinfo', '-color=never']);
    expect(stdout).toMatch(/^Chain: regtest$/m);
    expect(stdout).toMatch(/^Balances\n\s*\d+\.\d{8} \S+\n\s*\d+\.\d{8} second$/m);
  });
});
