import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as btc from '@scure/btc-signer';
import { buildSilentPayment, type FundedOutput } from '@repo/chain-double';
import { closeGracefully, createSilentLogger, listen } from '@repo/service';
import { createFundedWallet, newKey, requireBitcoind, startRegtestNode } from '@repo/regtest';
import { createApp as createProxy, loadConfig as loadProxyConfig } from '@repo/rpc-proxy';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';

// `npm run bench` (needs Bitcoin Core 29: BITCOIND or bitcoind on PATH): the delay from
// `sendrawtransaction` and from `generatetoaddress` to the payment showing in GET /payments/{id}
// (pending, then confirmed), p50 and p99 over BENCH_PAYMENTS payments (default 50), next to the
// node's own view measured in the same run: `getrawmempool` listing the transaction, and
// `generatetoaddress` returning (the node has the block). The service runs with its defaults
// (long poll on, mempool every 250 ms, the 5 s poll as fallback) behind the rpc-proxy.

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 50);
const PROXY_USER = 'bench';
const PROXY_PASSWORD = 'bench-secret';
const NETWORK = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef };

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function main(): Promise<void> {
  requireBitcoind(process.env);
  const node = await startRegtestNode();
  const wallet = await createFundedWallet(node);
  const proxyDir = mkdtempSync(join(tmpdir(), 'sp-bench-proxy-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'sp-bench-'));
  const proxy = createProxy(
    loadProxyConfig({
      DATA_DIR: proxyDir,
      BITCOIND_RPC_URL: node.url,
      BITCOIND_COOKIE_FILE: node.cookieFile,
      RPC_USER: PROXY_USER,
      RPC_PASSWORD: PROXY_PASSWORD,
    }),
    { logger: createSilentLogger() },
  );
  const proxyUrl = `http://127.0.0.1:${(await listen(proxy.servers.http, 0, '127.0.0.1')).port}`;
  const service = createApp(
    loadConfig({
      DATA_DIR: dataDir,
      SP_NETWORK: 'regtest',
      CHAIN_RPC_URL: proxyUrl,
      CHAIN_RPC_USER: PROXY_USER,
      CHAIN_RPC_PASSWORD: PROXY_PASSWORD,
      RATE_LIMIT_PER_MINUTE: '0',
    }),
    { logger: createSilentLogger() },
  );
  const url = `http://127.0.0.1:${(await listen(service.servers.http, 0, '127.0.0.1')).port}`;
  try {
    await service.start();
    await until(async () => service.scanner.status().state === 'synced' && service.scanner.longPollState() === 'waiting', 'the scanner');
    // A labelled address, as a wallet gets one.
    const created = await fetch(`${url}/generate-address`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'bench', amount: 0.0015 }),
    });
    if (created.status !== 201) throw new Error(`POST /generate-address answered ${created.status}: ${await created.text()}`);
    const { address } = (await created.json()) as { address: string };
    // One confirmed P2WPKH coin per payment, funded up front.
    const coins: FundedOutput[] = [];
    const miner = await wallet.newAddress();
    for (let i = 0; i < PAYMENTS; i++) {
      // The wallet chains its unconfirmed change: a block every 10 keeps under the mempool's chain limit.
      if (i % 10 === 9) await node.rpc('generatetoaddress', [1, miner]);
      const key = newKey('p2wpkh');
      const out = await wallet.fund(key.address, 200_000n);
      coins.push({
        txid: out.txid,
        vout: out.vout,
        amount: out.sats,
        script: key.script,
        privateKey: key.privateKey,
        publicKey: key.publicKey,
        kind: 'p2wpkh',
        address: key.address,
        txHex: out.hex,
        blockHash: '',
        height: -1,
      });
    }
    await node.rpc('generatetoaddress', [1, miner]);
    const change = btc.OutScript.encode(btc.Address(NETWORK).decode(await wallet.newAddress()));
    await until(async () => service.scanner.status().scanned_height === (await node.rpc<number>('getblockcount')), 'the funding block');

    const status = async (id: string): Promise<string | undefined> => {
      const res = await fetch(`${url}/payments/${id}`);
      return res.status === 200 ? ((await res.json()) as { status: string }).status : undefined;
    };
    const rows = { mempoolNode: [] as number[], mempoolService: [] as number[], blockNode: [] as number[], blockService: [] as number[] };
    for (const coin of coins) {
      const built = buildSilentPayment([coin], [{ address, sats: 150_000n }], change);
      const id = `${built.txid}:0`;
      // From sendrawtransaction: the node's getrawmempool, and GET /payments/{id}, polled side by side.
      let t0 = performance.now();
      const sent = node.rpc('sendrawtransaction', [built.hex]);
      const nodeSees = (async () => {
        await until(async () => (await node.rpc<string[]>('getrawmempool')).includes(built.txid), 'getrawmempool');
        return performance.now() - t0;
      })();
      const serviceSees = (async () => {
        await until(async () => (await status(id)) === 'pending', 'pending');
        return performance.now() - t0;
      })();
      await sent;
      rows.mempoolNode.push(await nodeSees);
      rows.mempoolService.push(await serviceSees);
      // From generatetoaddress: the call returning (the node has connected the block), and the payment confirmed.
      t0 = performance.now();
      const mined = node.rpc('generatetoaddress', [1, miner]).then(() => performance.now() - t0);
      await until(async () => (await status(id)) === 'confirmed', 'confirmed');
      rows.blockService.push(performance.now() - t0);
      rows.blockNode.push(await mined);
    }
    const f = (ms: number) => ms.toFixed(1).padStart(8);
    const line = (name: string, service: number[], reference: number[], refName: string) =>
      `| ${name.padEnd(20)} | ${f(percentile(service, 50))} | ${f(percentile(service, 99))} | ${refName.padEnd(28)} | ${f(percentile(reference, 50))} | ${f(percentile(reference, 99))} | ${(percentile(service, 50) / percentile(reference, 50)).toFixed(1).padStart(9)} |`;
    console.log(`detection delay over ${PAYMENTS} payments (ms; Bitcoin Core regtest through the rpc-proxy, service defaults)`);
    console.log('| from                 | p50 (ms) | p99 (ms) | node reference               | p50 (ms) | p99 (ms) | p50 ratio |');
    console.log('|----------------------|---------:|---------:|------------------------------|---------:|---------:|----------:|');
    console.log(line('sendrawtransaction', rows.mempoolService, rows.mempoolNode, 'getrawmempool lists it'));
    console.log(line('generatetoaddress', rows.blockService, rows.blockNode, 'generatetoaddress returns'));
  } finally {
    await closeGracefully(service.servers.http, 100);
    await service.close();
    proxy.servers.http.closeAllConnections();
    await new Promise((r) => proxy.servers.http.close(r));
    await proxy.close();
    await node.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(proxyDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
