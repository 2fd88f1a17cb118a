import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDenseChain, requireBitcoind, startRegtestNode } from '@repo/regtest';
import type { PackedBlockAnswer } from '@repo/bip352';
import { createTweakIndexer } from '../src/tweak-index/indexer';
import type { TweakIndexStore } from '../src/tweak-index/store';
import { createPostgresIndexStore } from '../src/tweak-index/store-postgres';
import { createSqliteIndexStore } from '../src/tweak-index/store-sqlite';
import { startTestPostgres } from '../test/tweak-index/support/postgres';
import { packedBlockAt } from '../test/tweak-index/support/follow-node';

// `node -r @repo/ts-register bench/tweak-index.ts` (Bitcoin Core 29: BITCOIND or bitcoind on PATH;
// PostgreSQL: TEST_DATABASE_URL or Debian's binaries): the tweak index built from dense regtest
// blocks (BENCH_INDEX_BLOCKS of BENCH_INDEX_TXS transactions), on SQLite and on PostgreSQL.
//   node alone: getblockhash + getblock <hash> 3 of every block, one after the other (and read)
//   index: the same blocks (already read, as the scanner reads them) given to the indexer, the store written per block
// Reported per backend: the index's time against the node's (the index alone must not be the
// slower of the two in a catch-up), transactions indexed per second, bytes stored per indexed
// transaction (the store's size after, over the transactions in it).

const BLOCKS = Number(process.env.BENCH_INDEX_BLOCKS ?? 4);
const TXS = Number(process.env.BENCH_INDEX_TXS ?? 1_000);

async function main(): Promise<void> {
  requireBitcoind();
  const node = await startRegtestNode({ args: ['-rpcthreads=4', '-maxmempool=1000'] });
  const dir = mkdtempSync(join(tmpdir(), 'sp-index-bench-'));
  const pg = await startTestPostgres();
  try {
    const chain = await buildDenseChain(node, { blocks: BLOCKS, txsPerBlock: TXS, wallets: 8 });
    const fetchStart = process.hrtime.bigint();
    const blocks: PackedBlockAnswer[] = [];
    for (let h = chain.firstHeight; h <= chain.tipHeight; h += 1) blocks.push(await packedBlockAt(node, h));
    const nodeMs = Number(process.hrtime.bigint() - fetchStart) / 1e6;
    const backends: Array<[string, TweakIndexStore]> = [
      ['sqlite', createSqliteIndexStore(join(dir, 'tweak-index.sqlite'))],
      ['postgres', createPostgresIndexStore(pg.url)],
    ];
    console.log(
      `${blocks.length} blocks, ${chain.transactions} transactions; node alone ${nodeMs.toFixed(0)} ms; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    for (const [name, store] of backends) {
      await store.open();
      await store.rollback(0);
      const indexer = createTweakIndexer(store);
      const started = process.hrtime.bigint();
      for (const b of blocks) await indexer.applyBlock(b, b.height);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const size = await store.size();
      console.log(
        `${name}: index ${ms.toFixed(0)} ms (node alone / index ${(nodeMs / ms).toFixed(2)}), ${((size.txs / ms) * 1000).toFixed(0)} tx/s, ` +
          `${size.txs} indexed transactions, ${(size.bytes / size.txs).toFixed(0)} bytes per indexed transaction`,
      );
      await store.close();
    }
  } finally {
    await pg.stop();
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
