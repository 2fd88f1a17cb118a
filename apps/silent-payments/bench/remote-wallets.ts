import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import secp from 'secp256k1';
import { loadSecp256k1Backend, type PackedBlockAnswer } from '@repo/bip352';
import { createSilentLogger } from '@repo/service';
import { requireBitcoind } from '@repo/regtest';
import { readBlock } from '../src/tweak-index/block-record';
import { createElectrumServers, ELECTRUM_LIMIT_DEFAULTS, type ElectrumServers } from '../src/tweak-index/electrum/server';
import { createTweakIndexer, type TweakIndexer } from '../src/tweak-index/indexer';
import { createSqliteIndexStore } from '../src/tweak-index/store-sqlite';
import type { StoredTx } from '../src/tweak-index/store';
import { connectElectrum, type ElectrumTestClient } from '../test/tweak-index/support/electrum-client';
import { newWallet, payingTx, type TestWallet } from '../test/tweak-index/support/sp-wallets';
import { packedBlockAt } from '../test/tweak-index/support/follow-node';
import { startDenseNode } from './dense-chain';

// `node -r @repo/ts-register bench/remote-wallets.ts` (Bitcoin Core 29: BITCOIND or bitcoind on
// PATH): remote scanning (Frigate's methods) as wallets see it, over the dense regtest chain
// (bench/dense-chain.ts) indexed in SQLite, through the Electrum server on a loopback socket with
// the service's defaults (scan pool of one worker a core).
//   restore: `blockchain.silentpayments.subscribe` of a fresh wallet to its `progress` 1.0 over the
//     last 1, 3 and all but one dense blocks; beside it, in the same run, libsecp256k1 doing
//     Frigate's per-row work over the same rows on one core (bench/remote-scan.ts's reference).
//   new block: 1, 10 and 100 wallets live (10 a connection), then the last dense block indexed with
//     one payment to each wallet added; the delay from the block's store to each wallet's
//     notification (p50 and the last), beside the same block's `blockchain.headers.subscribe`
//     notification on the same connections (what any Electrum server sends, no scan).
// BENCH_ROUNDS rounds (default 3), medians.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const METHOD = 'blockchain.silentpayments.subscribe';
const WALLET_COUNTS = [1, 10, 100];
const WALLETS_PER_CONNECTION = 10;
const TAG = createHash('sha256').update('BIP0352/SharedSecret').digest();

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (from: number): number => performance.now() - from;

/** Frigate's per-row work through libsecp256k1 over `rows` (bench/remote-scan.ts's reference), in ms. */
function referenceMs(rows: readonly StoredTx[], wallet: TestWallet): number {
  const started = performance.now();
  const zero = Buffer.alloc(4);
  let hits = 0;
  for (const row of rows) {
    const ecdh = secp.publicKeyTweakMul(row.tweak, wallet.scanPriv, true);
    const t = createHash('sha256').update(TAG).update(TAG).update(ecdh).update(zero).digest();
    const p = secp.publicKeyCombine([wallet.spendPub, secp.publicKeyCreate(t, true)], true);
    const prefix = Buffer.from(p.subarray(1, 9));
    if (row.outputs.some((o) => prefix.equals(o.xonly.subarray(0, 8)))) hits += 1;
  }
  if (hits < 0) throw new Error('unreachable');
  return ms(started);
}

/** Reads notifications of `c` up to `progress` 1.0 (params `[subscription, progress, history]`). */
async function untilComplete(c: ElectrumTestClient): Promise<void> {
  for (;;) {
    const [, progress] = (await c.nextParams(METHOD)) as [unknown, number];
    if (progress === 1) return;
  }
}

/** A fresh wallet's restore from `start` to the tip: `subscribed` once answered (its scan running), `done` with its time (ms). */
function startRestore(port: number, start: number): { subscribed: Promise<void>; done: Promise<number> } {
  let answered!: () => void;
  const subscribed = new Promise<void>((resolve) => (answered = resolve));
  const done = (async () => {
    const c = await connectElectrum(port);
    try {
      const started = performance.now();
      await c.call(METHOD, [...newWallet().params, start]);
      answered();
      await untilComplete(c);
      return ms(started);
    } finally {
      c.close();
    }
  })();
  return { subscribed, done };
}
const restore = (port: number, start: number): Promise<number> => startRestore(port, start).done;

interface Delays {
  /** Each wallet's notification after the block's store (ms). */
  wallets: number[];
  /** Each connection's header notification after the block's store (ms). */
  headers: number[];
}

/**
 * `count` wallets live, then `block` stored with a payment to each: the delays. With `restoreFrom`,
 * another wallet's restore from that height runs meanwhile. The block is rolled back after.
 */
async function newBlock(
  indexer: TweakIndexer,
  port: number,
  block: PackedBlockAnswer,
  height: number,
  count: number,
  restoreFrom?: number,
): Promise<Delays> {
  const wallets = Array.from({ length: count }, () => newWallet());
  const clients: ElectrumTestClient[] = [];
  try {
    for (let i = 0; i < count; i += WALLETS_PER_CONNECTION) {
      const c = await connectElectrum(port);
      clients.push(c);
      await c.call('blockchain.headers.subscribe');
      for (const w of wallets.slice(i, i + WALLETS_PER_CONNECTION)) {
        await c.call(METHOD, [...w.params, height]);
        await untilComplete(c);
      }
    }
    const record = await readBlock(block, loadSecp256k1Backend());
    record.txs.push(...wallets.map((w, i) => payingTx(w, randomBytes(32).toString('hex'), { count: 1 + (i % 2) })));
    const delays: Delays = { wallets: [], headers: [] };
    let stored = 0;
    const heard = clients.flatMap((c, i) => [
      c.nextParams('blockchain.headers.subscribe').then(() => delays.headers.push(ms(stored))),
      ...wallets
        .slice(i * WALLETS_PER_CONNECTION, (i + 1) * WALLETS_PER_CONNECTION)
        .map(() => c.nextParams(METHOD).then(() => delays.wallets.push(ms(stored)))),
    ]);
    const restoring = restoreFrom === undefined ? undefined : startRestore(port, restoreFrom);
    await restoring?.subscribed;
    await indexer.store.applyBlock(record);
    stored = performance.now();
    indexer.events.emit('block', height, record.hash);
    await Promise.all(heard);
    await restoring?.done;
    return delays;
  } finally {
    for (const c of clients) c.close();
    await indexer.store.rollback(height);
    indexer.events.emit('rollback', height);
  }
}

async function main(): Promise<void> {
  requireBitcoind(process.env);
  const { node, chain } = await startDenseNode();
  const dir = mkdtempSync(join(tmpdir(), 'sp-remote-wallets-'));
  const store = createSqliteIndexStore(join(dir, 'tweak-index.sqlite'));
  let servers: ElectrumServers | undefined;
  try {
    await store.open();
    const indexer = createTweakIndexer(store, { startHeight: chain.firstHeight });
    const blockAt = (h: number): Promise<PackedBlockAnswer> => packedBlockAt(node, h);
    // All dense blocks but the last, which the new-block rounds add (with their payments) and roll back.
    const last = chain.tipHeight;
    for (let h = chain.firstHeight; h < last; h += 1) await indexer.applyBlock(await blockAt(h), h);
    const lastBlock = await blockAt(last);
    servers = createElectrumServers({
      feed: indexer,
      settings: {
        network: 'regtest',
        serverName: 'silent-payments-electrs bench',
        startHeight: chain.firstHeight,
        limits: { ...ELECTRUM_LIMIT_DEFAULTS, maxConnectionsPerIp: 64 },
      },
      logger: createSilentLogger(),
    });
    await new Promise<void>((resolve) => servers!.tcp.listen(0, '127.0.0.1', resolve));
    const port = (servers.tcp.address() as AddressInfo).port;
    await restore(port, last - 1); // the workers' start is not a restore's

    const indexed = last - chain.firstHeight;
    const spans = [...new Set([1, Math.min(3, indexed), indexed])];
    const restoreRows: string[] = [];
    for (const blocks of spans) {
      const start = last - blocks;
      const rows = await store.txs(start, last - 1);
      const times: number[] = [];
      const refs: number[] = [];
      for (let r = 0; r < ROUNDS; r += 1) {
        times.push(await restore(port, start));
        refs.push(referenceMs(rows, newWallet()));
      }
      const [t, ref] = [median(times), median(refs)];
      restoreRows.push(
        `| ${blocks} block${blocks === 1 ? '' : 's'} | ${rows.length} | ${Math.round(t)} | ${Math.round((rows.length / t) * 1000)} | ${Math.round(ref)} | ${(ref / t).toFixed(2)} |`,
      );
    }

    const blockRows: string[] = [];
    const cases = [
      ...WALLET_COUNTS.map((count) => ({ count, label: String(count), restoreFrom: undefined as number | undefined })),
      { count: 10, label: `10, while another wallet restores all ${indexed} blocks`, restoreFrom: chain.firstHeight },
    ];
    for (const { count, label, restoreFrom } of cases) {
      const p50: number[] = [];
      const worst: number[] = [];
      const headers: number[] = [];
      for (let r = 0; r < ROUNDS; r += 1) {
        const d = await newBlock(indexer, port, lastBlock, last, count, restoreFrom);
        p50.push(median(d.wallets));
        worst.push(Math.max(...d.wallets));
        headers.push(Math.max(...d.headers));
      }
      blockRows.push(`| ${label} | ${median(p50).toFixed(1)} | ${median(worst).toFixed(1)} | ${median(headers).toFixed(1)} |`);
    }

    const report = [
      `## remote scanning (Frigate's methods) over the dense chain`,
      '',
      `${cpus()[0]?.model ?? 'cpu'}, ${availableParallelism()} cores, Node ${process.version}, ${chain.tipHeight - chain.firstHeight + 1} dense blocks, median of ${ROUNDS}`,
      '',
      '| restore from | rows | subscribe → progress 1.0 (ms) | rows/s | reference: libsecp256k1, Frigate’s per-row work, one core (ms) | reference / ours |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...restoreRows,
      '',
      `| wallets live | new block (${lastBlock.nTx} txs + one payment a wallet): notification p50 (ms) | last wallet's (ms) | reference: the block's headers.subscribe notification, last connection (ms) |`,
      '| ---: | ---: | ---: | ---: |',
      ...blockRows,
      '',
    ].join('\n');
    console.log(report);
    // After the catch-up's (bench-report.md, written first by `npm run bench`).
    appendFileSync(join(__dirname, '..', 'bench-report.md'), `\n${report}`);
  } finally {
    await servers?.close();
    await store.close();
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
