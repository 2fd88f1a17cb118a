import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createReceiver, loadSecp256k1Backend, packBlockAnswer } from '@repo/bip352';
import { processCpuMicros } from '@repo/metrics';
import { createSilentLogger } from '@repo/service';
import { requireBitcoind, type DenseChain, type RegtestNode } from '@repo/regtest';
import { startDenseNode } from './dense-chain';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createNoopPublisher, type Publisher } from '../src/publisher';
import { FETCH_CONCURRENCY } from '../src/scanner';
import { createPostgresIndexStore } from '../src/tweak-index/store-postgres';
import { createSqliteIndexStore } from '../src/tweak-index/store-sqlite';
import { INDEX_DATABASE_FILE } from '../src/tweak-index/config';
import type { TweakIndexStore } from '../src/tweak-index/store';
import { startTestPostgres, type TestPostgres } from '../test/tweak-index/support/postgres';

// `npm run bench` (Bitcoin Core 29: BITCOIND or bitcoind on PATH): the scanner's catch-up over
// dense regtest blocks against the node alone serving the same blocks, alternately in one run.
// The chain (BENCH_DENSE_BLOCKS blocks of BENCH_DENSE_TXS transactions, bench/dense-chain.ts) is cached in BENCH_DENSE_DIR (default
// bench/data/dense-<blocks>x<txs>: a bitcoind datadir with chain.json beside the chain) so reruns reuse it.
//   node alone: getblockhash + getblock <hash> 3 for each block, one after the other, the body read
//   node alone, N at a time: the same with N blocks requested at once (N = FETCH_CONCURRENCY, as
//     the service asks them)
//   catch-up: the service from SP_START_HEIGHT = the first dense block to the tip (fresh DATA_DIR)
// The figure is node-alone time / catch-up time of each pair run one after the other, median over
// the rounds (1.0: the scanner keeps the node's pace). Beside it, node alone N at a time /
// catch-up: against the node serving as fast as the service asks it to, what the service's own
// work costs the catch-up.
// The catch-up runs three ways in each round: without the light-wallet index, with it on SQLite
// (DATA_DIR) and with it on PostgreSQL (TEST_DATABASE_URL, or a throwaway cluster from Debian's
// binaries; without either that row says so), each with the bytes its store holds per indexed
// transaction.
// On Linux it also reports the CPU time (from /proc) of bitcoind and of this process in each
// catch-up, which on a shared machine says more than the wall clock: the catch-up cannot beat
// (node + scanner CPU) / cores.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Packed transactions a call of the scan, as src/scanner/scan-block.ts calls it. */
const SCAN_RUN = 256;

/** CPU time (ms) of process `pid` so far, every thread included; undefined where there is no /proc. */
function cpuMs(pid: number | undefined): number | undefined {
  const micros = processCpuMicros(pid);
  return Number.isNaN(micros) ? undefined : micros / 1000;
}

/** The blocks the service asks of the node at once. */
const FETCH_AT_ONCE = FETCH_CONCURRENCY;

/**
 * The node alone: each block's hash, then the block at verbosity 3, read whole (not parsed);
 * `atOnce` blocks requested at a time, in height order.
 */
async function nodeAlone(node: RegtestNode, chain: DenseChain, atOnce = 1): Promise<{ ms: number; bytes: number }> {
  let bytes = 0;
  let next = chain.firstHeight;
  const started = performance.now();
  const fetcher = async (): Promise<void> => {
    while (next <= chain.tipHeight) {
      const height = next++;
      const hash = JSON.parse((await node.post(`{"jsonrpc":"1.0","id":0,"method":"getblockhash","params":[${height}]}`)).text).result;
      bytes += (await node.post(`{"jsonrpc":"1.0","id":1,"method":"getblock","params":["${hash}",3]}`)).body.length;
    }
  };
  await Promise.all(Array.from({ length: atOnce }, fetcher));
  return { ms: performance.now() - started, bytes };
}

/**
 * The scan alone, the floor under any catch-up: every block fetched and read first as the
 * service reads it (packBlockAnswer, not timed), then its packed transactions scanned on this
 * thread by the receiver the service uses (native backend, change label), as the service calls
 * it (scanPacked, 256 transactions a call). CPU ms of that loop only: no HTTP, no reading, no storage.
 */
async function scanAlone(node: RegtestNode, chain: DenseChain): Promise<{ cpuMs: number; scanned: number }> {
  const native = loadSecp256k1Backend('native');
  const secret = (): Uint8Array => {
    for (;;) {
      const d = new Uint8Array(randomBytes(32));
      if (d[0]! < 0xff) return d; // below the group order
    }
  };
  const receiver = createReceiver({
    scanPriv: secret(),
    spendPub: native.toCompressed(native.baseMul(secret())),
    labels: [],
    backend: native,
  });
  const runs: Uint8Array[] = [];
  let scanned = 0;
  for (let height = chain.firstHeight; height <= chain.tipHeight; height++) {
    const hash = await node.rpc<string>('getblockhash', [height]);
    const { body } = await node.post(JSON.stringify({ jsonrpc: '2.0', id: 'block', method: 'getblock', params: [hash, 3] }));
    const { jobs, offsets } = packBlockAnswer(body, 'block')!;
    scanned += offsets.length;
    for (let at = 0; at < offsets.length; at += SCAN_RUN) runs.push(jobs.subarray(offsets[at], offsets[at + SCAN_RUN] ?? jobs.length));
  }
  const before = process.cpuUsage();
  for (const run of runs) receiver.scanPacked(run);
  const used = process.cpuUsage(before);
  return { cpuMs: (used.user + used.system) / 1000, scanned };
}

/** The service's catch-up from the first dense block to the tip: wall time, and CPU time of the node and of this process. */
/** Where a catch-up keeps the light-wallet index: nowhere (undefined), SQLite in DATA_DIR (`{}`), or PostgreSQL. */
type IndexMode = { databaseUrl?: string } | undefined;

/** What one catch-up took. */
interface CatchUp {
  ms: number;
  nodeCpu?: number;
  ownCpu?: number;
  /** Bytes the index's store holds per indexed transaction (with the index on). */
  bytesPerTx?: number;
}

/** Empties a PostgreSQL index left by an earlier round. */
/**
 * Empties the PostgreSQL index before a catch-up, then compacts its tables: the rows of the round
 * before would otherwise stay as dead space in them, and the bytes per transaction (their total
 * size) would grow with each round.
 */
async function clearIndex(databaseUrl: string): Promise<void> {
  const store = createPostgresIndexStore(databaseUrl);
  await store.open();
  await store.rollback(0);
  await store.close();
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM FULL idx_blocks, idx_spends');
  } finally {
    await client.end();
  }
}

/** What an index's store holds: its indexed transactions and their bytes. */
async function indexSize(store: TweakIndexStore): Promise<{ txs: number; bytes: number }> {
  await store.open();
  try {
    return await store.size();
  } finally {
    await store.close();
  }
}

async function catchUp(node: RegtestNode, chain: DenseChain, index: IndexMode = undefined): Promise<CatchUp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sp-catch-up-'));
  const indexEnv: Record<string, string> =
    index === undefined
      ? {}
      : {
          INDEX_ENABLED: 'true',
          SP_INDEX_START_HEIGHT: String(chain.firstHeight),
          INDEX_GRPC_PORT: '0',
          ELECTRUM_PORT: '0',
          ...(index.databaseUrl === undefined ? {} : { DATABASE_URL: index.databaseUrl }),
        };
  if (index?.databaseUrl !== undefined) await clearIndex(index.databaseUrl);
  // The end: the tip's block stored, told by the service's own BlockScanned event (published right
  // after the block's SQLite transaction). Not by polling the scanner's status: every 2 ms that
  // cost the service's thread a noticeable share of the CPU a catch-up needs.
  let reached: () => void = () => undefined;
  const tipStored = new Promise<void>((resolve) => (reached = resolve));
  const silent = createNoopPublisher();
  const publisher: Publisher = {
    ...silent,
    publish(type, data) {
      if (type === 'BlockScanned' && (data as { block_height: number }).block_height === chain.tipHeight) reached();
      return silent.publish(type, data);
    },
  };
  const service = createApp(
    loadConfig({
      DATA_DIR: dataDir,
      SP_NETWORK: 'regtest',
      CHAIN_RPC_URL: node.url,
      CHAIN_RPC_COOKIE_FILE: node.cookieFile,
      SP_START_HEIGHT: String(chain.firstHeight),
      SCAN_MEMPOOL: 'false',
      SCAN_LONG_POLL: 'false',
      SCAN_POLL_INTERVAL_MS: '60000',
      ...indexEnv,
    }),
    { logger: createSilentLogger(), publisher },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const nodeBefore = cpuMs(node.pid);
    const ownBefore = cpuMs(process.pid);
    const started = performance.now();
    await service.start();
    await Promise.race([
      tipStored,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('catch-up: timed out')), 600_000))),
    ]);
    const ms = performance.now() - started;
    if (service.scanner.status().scanned_height !== chain.tipHeight) throw new Error('catch-up: the tip was announced, not stored');
    const nodeAfter = cpuMs(node.pid);
    const ownAfter = cpuMs(process.pid);
    await service.close();
    const stored =
      index === undefined
        ? undefined
        : await indexSize(
            index.databaseUrl === undefined
              ? createSqliteIndexStore(join(dataDir, INDEX_DATABASE_FILE))
              : createPostgresIndexStore(index.databaseUrl),
          );
    return {
      ms,
      bytesPerTx: stored === undefined || stored.txs === 0 ? undefined : stored.bytes / stored.txs,
      nodeCpu: nodeBefore === undefined || nodeAfter === undefined ? undefined : nodeAfter - nodeBefore,
      ownCpu: ownBefore === undefined || ownAfter === undefined ? undefined : ownAfter - ownBefore,
    };
  } finally {
    clearTimeout(timer);
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  requireBitcoind(process.env);
  const { node, chain } = await startDenseNode();
  const cores = availableParallelism();
  let pg: TestPostgres | undefined;
  try {
    const load = loadavg();
    const alone: number[] = [];
    const aloneAtOnce: number[] = [];
    const times: number[] = [];
    const cpu: Array<{ nodeCpu?: number; ownCpu?: number }> = [];
    // The index's rows: the catch-up with it on each backend, paired with the same round's node alone.
    let pgMissing: string | undefined;
    try {
      pg = await startTestPostgres();
    } catch (err) {
      pgMissing = (err as Error).message;
    }
    const indexed: Record<'SQLite' | 'PostgreSQL', { times: number[]; paired: number[]; bytes: number[] }> = {
      SQLite: { times: [], paired: [], bytes: [] },
      PostgreSQL: { times: [], paired: [], bytes: [] },
    };
    // node alone / catch-up of each pair run one after the other: the load of a shared machine changes between pairs
    const paired: number[] = [];
    const pairedAtOnce: number[] = [];
    let bytes = 0;
    await nodeAlone(node, chain); // warm the node's caches
    for (let round = 0; round < ROUNDS; round++) {
      const a = await nodeAlone(node, chain);
      alone.push(a.ms);
      bytes = a.bytes;
      const n = await nodeAlone(node, chain, FETCH_AT_ONCE);
      aloneAtOnce.push(n.ms);
      const c = await catchUp(node, chain);
      times.push(c.ms);
      cpu.push(c);
      paired.push(a.ms / c.ms);
      pairedAtOnce.push(n.ms / c.ms);
      for (const [name, mode] of [
        ['SQLite', {}],
        ['PostgreSQL', pg === undefined ? undefined : { databaseUrl: pg.url }],
      ] as const) {
        if (mode === undefined) continue;
        const withIndex = await catchUp(node, chain, mode);
        indexed[name].times.push(withIndex.ms);
        indexed[name].paired.push(a.ms / withIndex.ms);
        if (withIndex.bytesPerTx !== undefined) indexed[name].bytes.push(withIndex.bytesPerTx);
        console.error(`round ${round + 1}: catch-up with the index on ${name} ${withIndex.ms.toFixed(0)} ms`);
      }
      console.error(
        `round ${round + 1}: node alone ${a.ms.toFixed(0)} ms (${n.ms.toFixed(0)} ms ${FETCH_AT_ONCE} at a time), catch-up ${c.ms.toFixed(0)} ms` +
          (c.nodeCpu === undefined ? '' : ` (CPU: node ${c.nodeCpu} ms, service ${c.ownCpu} ms)`),
      );
    }
    const scans = [];
    for (let round = 0; round < ROUNDS; round++) scans.push(await scanAlone(node, chain));
    const scanMs = median(scans.map((r) => r.cpuMs));
    const nodeMs = median(alone);
    const nodeCpuMs = median(cpu.flatMap((c) => (c.nodeCpu === undefined ? [] : [c.nodeCpu])));
    const weight = chain.weights.reduce((a, b) => a + b, 0) / chain.weights.length;
    const ratio = median(paired);
    const range = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
    const cpuCell = (key: 'nodeCpu' | 'ownCpu') =>
      cpu.every((c) => c[key] !== undefined) ? median(cpu.map((c) => c[key]!)).toFixed(0) : '–';
    const lines = [
      '# silent-payments catch-up benchmark',
      '',
      `Node ${process.version}, Bitcoin Core regtest, ${cores} cores shared with other work (load average before: ${load[0]!.toFixed(2)} / ${load[1]!.toFixed(2)}, after: ${loadavg()[0]!.toFixed(2)}), ${new Date().toISOString()}.`,
      `Chain: ${chain.tipHeight - chain.firstHeight + 1} dense blocks (${chain.firstHeight}–${chain.tipHeight}), ${chain.transactions.toLocaleString('en-US')} transactions (P2TR and P2WPKH inputs and outputs, Core's wallets), ${Math.round(weight).toLocaleString('en-US')} weight units a block on average, ${(bytes / 1e6).toFixed(1)} MB of getblock verbosity 3 JSON in all.`,
      `Node alone: getblockhash + getblock <hash> 3 for each block in turn, bodies read, median of ${alone.length} runs alternated with the catch-ups; and the same with ${FETCH_AT_ONCE} blocks requested at a time, as the service asks them, median of ${aloneAtOnce.length}. Catch-up: the service from SP_START_HEIGHT to the tip, fresh database; median of ${ROUNDS}.`,
      '',
      `The figure: node alone / catch-up of each pair (the node alone run just before the catch-up), median and range over the rounds. Beside it, against the node serving ${FETCH_AT_ONCE} blocks at a time alone: what the service's own work (parse, scan, storage) costs the catch-up when the node is asked as the service asks it.`,
      '',
      `| scan | catch-up (ms) | range (ms) | node alone (ms, median of all) | node alone / catch-up, paired | range | ≥ 0.90 | node alone ${FETCH_AT_ONCE} at a time (ms, median of all) | node alone ${FETCH_AT_ONCE} at a time / catch-up, paired (range) | CPU in the catch-up: node / service (ms, median) |`,
      '|---|---:|---:|---:|---:|---:|:-:|---:|---:|---:|',
      `| main thread | ${median(times).toFixed(0)} | ${range(times, 0)} | ${nodeMs.toFixed(0)} | ${ratio.toFixed(2)} | ${range(paired, 2)} | ${ratio >= 0.9 ? 'yes' : 'no'} | ${median(aloneAtOnce).toFixed(0)} | ${median(pairedAtOnce).toFixed(2)} (${range(pairedAtOnce, 2)}) | ${cpuCell('nodeCpu')} / ${cpuCell('ownCpu')} |`,
      '',
      'The same catch-up with the light-wallet index on (INDEX_ENABLED, from the first dense block), paired with the same rounds of the node alone:',
      '',
      '| index store | catch-up (ms) | range (ms) | node alone / catch-up, paired | range | ≥ 0.90 | bytes stored per indexed transaction |',
      '|---|---:|---:|---:|---:|:-:|---:|',
      ...(['SQLite', 'PostgreSQL'] as const).map((name) => {
        const row = indexed[name];
        if (row.times.length === 0) return `| ${name} | not run: ${pgMissing ?? 'no server'} | | | | | |`;
        const r = median(row.paired);
        return `| ${name} | ${median(row.times).toFixed(0)} | ${range(row.times, 0)} | ${r.toFixed(2)} | ${range(row.paired, 2)} | ${r >= 0.9 ? 'yes' : 'no'} | ${row.bytes.length === 0 ? '–' : median(row.bytes).toFixed(0)} |`;
      }),
      '',
      `The floor under any catch-up: the scan alone (${scans[0]!.scanned.toLocaleString('en-US')} transactions with a taproot output, read beforehand as the service reads them, scanned on one thread by the native receiver ${SCAN_RUN} a call as the service does, change label; no HTTP, reading or storage) took ${scanMs.toFixed(0)} ms of CPU (median of ${ROUNDS}; range ${range(
        scans.map((r) => r.cpuMs),
        0,
      )}), and the node ${Number.isNaN(nodeCpuMs) ? '–' : nodeCpuMs.toFixed(0)} ms of CPU to serve the blocks during a catch-up. A catch-up on c cores shared with the node takes at least max(node alone ${FETCH_AT_ONCE} at a time, (node CPU + scan CPU) / c), so node alone / catch-up can be at most (for this machine's core count a bound from this run's figures; for the others an estimate that keeps this run's node alone times, which on fewer cores are slowed by the bench's own client):`,
      '',
      '| cores | best possible node alone / catch-up, with nothing but the scan | ≥ 0.90 possible |',
      '|---:|---:|:-:|',
      ...[1, 2, 4, 8].map((c) => {
        const bound = Number.isNaN(nodeCpuMs) ? Number.NaN : nodeMs / Math.max(median(aloneAtOnce), (nodeCpuMs + scanMs) / c);
        return `| ${c}${c === cores ? ' (this machine)' : ' (estimate)'} | ${Number.isNaN(bound) ? '–' : bound.toFixed(2)} | ${Number.isNaN(bound) ? '–' : bound >= 0.9 ? 'yes' : 'no'} |`;
      }),
      '',
    ];
    const report = lines.join('\n');
    console.log(report);
    writeFileSync(join(__dirname, '..', 'bench-report.md'), report);
  } finally {
    await pg?.stop();
    await node.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
