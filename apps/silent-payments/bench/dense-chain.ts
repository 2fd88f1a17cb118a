import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDenseChain, startRegtestNode, type DenseChain, type RegtestNode } from '@repo/regtest';

// The dense regtest chain the catch-up and remote-wallet benchmarks read: BENCH_DENSE_BLOCKS blocks
// of BENCH_DENSE_TXS transactions, built with Core's wallets by @repo/regtest's buildDenseChain and
// cached in BENCH_DENSE_DIR (default bench/data/dense-<blocks>x<txs>: a bitcoind datadir with
// chain.json beside the chain) so reruns reuse it.

export const BLOCKS = Number(process.env.BENCH_DENSE_BLOCKS ?? 10);
export const TXS = Number(process.env.BENCH_DENSE_TXS ?? 2_500);
const CACHE = process.env.BENCH_DENSE_DIR || join(__dirname, 'data', `dense-${BLOCKS}x${TXS}`);

/** Bitcoin Core on the cached dense chain, building it first when the cache has none. */
export async function startDenseNode(): Promise<{ node: RegtestNode; chain: DenseChain }> {
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
