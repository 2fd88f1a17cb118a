import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '@repo/service';
import { buildDenseChain, requireBitcoind, startRegtestNode, type DenseChain, type RegtestNode } from '@repo/regtest';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';

// `npm run bench` (Bitcoin Core 29: BITCOIND or bitcoind on PATH): the scanner's catch-up over
// dense regtest blocks against the node alone serving the same blocks, alternately in one run.
// The chain (BENCH_DENSE_BLOCKS blocks of BENCH_DENSE_TXS transactions, built with Core's wallets
// by @repo/regtest's buildDenseChain) is cached in BENCH_DENSE_DIR (default
// bench/data/dense-<blocks>x<txs>: a bitcoind datadir with chain.json beside the chain) so reruns reuse it.
//   node alone: getblockhash + getblock <hash> 3 for each block, one after the other, the body read
//   catch-up: the service from SP_START_HEIGHT = the first dense block to the tip (fresh DATA_DIR)
// The figure is node-alone time / catch-up time (1.0: the scanner keeps the node's pace).

const BLOCKS = Number(process.env.BENCH_DENSE_BLOCKS ?? 10);
const TXS = Number(process.env.BENCH_DENSE_TXS ?? 2_500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CACHE = process.env.BENCH_DENSE_DIR || join(__dirname, 'data', `dense-${BLOCKS}x${TXS}`);

async function startNode(): Promise<{ node: RegtestNode; chain: DenseChain }> {
  const marker = join(CACHE, 'chain.json');
  if (existsSync(marker)) {
    const node = await startRegtestNode({ datadir: CACHE, args: ['-rpcthreads=4'] });
    return { node, chain: JSON.parse(readFileSync(marker, 'utf8')) as DenseChain };
  }
  rmSync(CACHE, { recursive: true, force: true });
  const node = await startRegtestNode({ datadir: CACHE, args: ['-rpcthreads=4', '-maxmempool=1000'] });
  const started = Date.now();
  const chain = await buildDenseChain(node, { blocks: BLOCKS, txsPerBlock: TXS, log: (line) => console.error(line) });
  console.error(`chain built in ${((Date.now() - started) / 1000).toFixed(0)} s, cached in ${CACHE}`);
  writeFileSync(marker, JSON.stringify(chain));
  return { node, chain };
}

/** The node alone: each block's hash, then the block at verbosity 3, read whole (not parsed). */
async function nodeAlone(node: RegtestNode, chain: DenseChain): Promise<{ ms: number; bytes: number }> {
  let bytes = 0;
  const started = performance.now();
  for (let height = chain.firstHeight; height <= chain.tipHeight; height++) {
    const hash = JSON.parse((await node.post(`{"jsonrpc":"1.0","id":0,"method":"getblockhash","params":[${height}]}`)).text).result;
    bytes += (await node.post(`{"jsonrpc":"1.0","id":1,"method":"getblock","params":["${hash}",3]}`)).body.length;
  }
  return { ms: performance.now() - started, bytes };
}

/** The service's catch-up from the first dense block to the tip. */
async function catchUp(node: RegtestNode, chain: DenseChain, workers: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sp-catch-up-'));
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
      SCAN_WORKERS: String(workers),
    }),
    { logger: createSilentLogger() },
  );
  try {
    const started = performance.now();
    await service.start();
    while (service.scanner.status().scanned_height !== chain.tipHeight) {
      if (performance.now() - started > 600_000) throw new Error('catch-up: timed out');
      await new Promise((r) => setTimeout(r, 2));
    }
    return performance.now() - started;
  } finally {
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
  const { node, chain } = await startNode();
  const cores = availableParallelism();
  const configs = [...new Set([Math.max(1, cores - 1), 0, cores])];
  try {
    const load = loadavg();
    const alone: number[] = [];
    const byWorkers = new Map<number, number[]>(configs.map((w) => [w, []]));
    let bytes = 0;
    await nodeAlone(node, chain); // warm the node's caches
    for (let round = 0; round < ROUNDS; round++) {
      for (const workers of configs) {
        const a = await nodeAlone(node, chain);
        alone.push(a.ms);
        bytes = a.bytes;
        byWorkers.get(workers)!.push(await catchUp(node, chain, workers));
        console.error(
          `round ${round + 1}, SCAN_WORKERS=${workers}: node alone ${a.ms.toFixed(0)} ms, catch-up ${byWorkers.get(workers)!.at(-1)!.toFixed(0)} ms`,
        );
      }
    }
    const nodeMs = median(alone);
    const weight = chain.weights.reduce((a, b) => a + b, 0) / chain.weights.length;
    const lines = [
      '# silent-payments catch-up benchmark',
      '',
      `Node ${process.version}, Bitcoin Core regtest, ${cores} cores shared with other work (load average before: ${load[0]!.toFixed(2)} / ${load[1]!.toFixed(2)}, after: ${loadavg()[0]!.toFixed(2)}), ${new Date().toISOString()}.`,
      `Chain: ${chain.tipHeight - chain.firstHeight + 1} dense blocks (${chain.firstHeight}–${chain.tipHeight}), ${chain.transactions.toLocaleString('en-US')} transactions (P2TR and P2WPKH inputs and outputs, Core's wallets), ${Math.round(weight).toLocaleString('en-US')} weight units a block on average, ${(bytes / 1e6).toFixed(1)} MB of getblock verbosity 3 JSON in all.`,
      `Node alone: getblockhash + getblock <hash> 3 for each block in turn, bodies read, median of ${alone.length} runs alternated with the catch-ups. Catch-up: the service from SP_START_HEIGHT to the tip, fresh database, default SCAN_PREFETCH_BLOCKS; median of ${ROUNDS}.`,
      '',
      '| SCAN_WORKERS | catch-up (ms) | range (ms) | node alone (ms, same run) | node alone / catch-up | ≥ 0.90 |',
      '|---:|---:|---:|---:|---:|:-:|',
      ...configs.map((w) => {
        const times = byWorkers.get(w)!;
        const ratio = nodeMs / median(times);
        return `| ${w === 0 ? '0 (main thread)' : w} | ${median(times).toFixed(0)} | ${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)} | ${nodeMs.toFixed(0)} | ${ratio.toFixed(2)} | ${ratio >= 0.9 ? 'yes' : 'no'} |`;
      }),
      '',
    ];
    const report = lines.join('\n');
    console.log(report);
    writeFileSync(join(__dirname, '..', 'bench-report.md'), report);
  } finally {
    await node.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
