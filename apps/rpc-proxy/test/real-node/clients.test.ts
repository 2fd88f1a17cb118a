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

  it("answers 400 concurrent calls of the npm bitcoin-core client with Core's results, as Core itself does", async () => {
    const [proxyPort, nodePort] = [Number(new URL(proxy.url).port), node.rpcPort];
    const calls = (port: number, username: string, password: string) => {
      const client = new Client({ host: `http://127.0.0.1:${port}`, username, password, timeout: 120_000 });
      return Promise.all(Array.from({ length: 400 }, (_, i) => client.command(i % 2 ? 'getblockcount' : 'getbestblockhash')));
    };
    const [user, password] = Buffer.from(node.authorization().slice('Basic '.length), 'base64').toString().split(':') as [string, string];
    const direct = await calls(nodePort, user, password);
    const viaProxy = await calls(proxyPort, CLIENT_USER, CLIENT_PASSWORD);
    expect(viaProxy).toEqual(direct);
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
