import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDenseChain, createFundedWallet, startRegtestNode, type RegtestNode } from '@repo/regtest';
import { computeTweakData, isP2trHex, loadSecp256k1Backend, scanInputsFromRpc } from '@repo/bip352';
import type { RpcBlock } from '../../../src/tweak-index/block-record';
import { buildGcsFilter, filterKey } from '../../../src/tweak-index/gcs';
import { createTweakIndexer, type TweakIndexer } from '../../../src/tweak-index/indexer';
import { createPostgresIndexStore } from '../../../src/tweak-index/store-postgres';
import { createSqliteIndexStore } from '../../../src/tweak-index/store-sqlite';
import { startTestPostgres, type TestPostgres } from '../../tweak-index/support/postgres';
import { packedBlockAt } from '../../tweak-index/support/follow-node';
import { gcsMatches } from '../../tweak-index/support/gcs-reader';

const noble = loadSecp256k1Backend('noble');

/** BIP-158's basic filter elements: every output script but empty and OP_RETURN ones, every spent script; de-duplicated. */
function basicFilterElements(block: RpcBlock): Uint8Array[] {
  const scripts = new Set<string>();
  for (const tx of block.tx) {
    for (const o of tx.vout) if (o.scriptPubKey.hex !== '' && !o.scriptPubKey.hex.startsWith('6a')) scripts.add(o.scriptPubKey.hex);
    for (const i of tx.vin) if (i.prevout) scripts.add(i.prevout.scriptPubKey.hex);
  }
  return [...scripts].map((s) => Uint8Array.from(Buffer.from(s, 'hex')));
}

describe.each(['sqlite', 'postgres'])('the tweak indexer fed real blocks of a regtest bitcoind (%s)', (backend) => {
  let node: RegtestNode;
  let dir: string;
  let indexer: TweakIndexer;
  let pg: TestPostgres | undefined;
  const block = async (height: number): Promise<RpcBlock> =>
    node.rpc<RpcBlock>('getblock', [await node.rpc<string>('getblockhash', [height]), 3]);

  beforeAll(async () => {
    node = await startRegtestNode({ args: ['-blockfilterindex=1'] });
    dir = mkdtempSync(join(tmpdir(), 'sp-index-real-'));
    pg = backend === 'postgres' ? await startTestPostgres() : undefined;
    const store = pg === undefined ? createSqliteIndexStore(join(dir, 'tweak-index.sqlite')) : createPostgresIndexStore(pg.url);
    await store.open();
    indexer = createTweakIndexer(store);
  }, 120_000);
  afterAll(async () => {
    await indexer?.store.close();
    await pg?.stop();
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes a block of many transactions with the tweaks of the BIP-352 reference and the filters of BIP-158', async () => {
    const chain = await buildDenseChain(node, { blocks: 2, txsPerBlock: 150, wallets: 4 });
    for (let h = chain.firstHeight; h <= chain.tipHeight; h += 1) {
      const b = await block(h);
      await indexer.applyBlock(await packedBlockAt(node, h), h);
      const expected = new Map<string, string>();
      for (const tx of b.tx.slice(1)) {
        if (!tx.vout.some((o) => isP2trHex(o.scriptPubKey.hex))) continue;
        const data = computeTweakData(scanInputsFromRpc(tx.vin), noble);
        if (data !== null) expected.set(tx.txid, data.tweak);
      }
      const stored = await indexer.store.txs(h, h);
      expect(stored.length).toBeGreaterThan(50);
      expect(new Map(stored.map((t) => [t.txid, Buffer.from(t.tweak).toString('hex')]))).toEqual(expected);

      // Our GCS coding against Core's own BIP-158 filter of the same block.
      const core = await node.rpc<{ filter: string }>('getblockfilter', [b.hash]);
      expect(Buffer.from(buildGcsFilter(filterKey(b.hash), basicFilterElements(b))).toString('hex')).toBe(core.filter);

      // Every taproot output key of the block is in the new-outputs filter; a key that is not, is not.
      const [stored0] = await indexer.store.blocks(h, h);
      const keys = b.tx.flatMap((tx) =>
        tx.vout.filter((o) => isP2trHex(o.scriptPubKey.hex)).map((o) => Buffer.from(o.scriptPubKey.hex.slice(4), 'hex')),
      );
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) expect(gcsMatches(stored0!.newOutputsFilter, filterKey(b.hash), k)).toBe(true);
      expect(gcsMatches(stored0!.newOutputsFilter, filterKey(b.hash), Buffer.alloc(32, 0xab))).toBe(false);
    }
    const second = await indexer.store.txs(chain.tipHeight, chain.tipHeight);
    const spent = await indexer.store.spent(chain.tipHeight, chain.tipHeight);
    // The second dense block spends outputs of the first: those indexed are marked spent at its height.
    const spentKeys = new Set(spent.map((s) => `${s.txid}:${s.vout}`));
    const firstOutputs = (await indexer.store.txs(chain.firstHeight, chain.firstHeight)).flatMap((t) =>
      t.outputs.map((o) => ({ id: `${t.txid}:${o.vout}`, o })),
    );
    const marked = firstOutputs.filter(({ o }) => o.spentHeight === chain.tipHeight).map(({ id }) => id);
    expect(marked.length).toBeGreaterThan(0);
    for (const id of marked) expect(spentKeys.has(id)).toBe(true);
    expect(second.length).toBeGreaterThan(0);
  });

  it('rolls back an orphaned block and indexes the block that replaced it', async () => {
    const wallet = await createFundedWallet(node, 'reorg');
    const tip = await node.rpc<number>('getblockcount');
    for (let h = ((await indexer.store.tip())?.height ?? tip) + 1; h <= tip; h += 1)
      await indexer.applyBlock(await packedBlockAt(node, h), h);
    const address = await wallet.newAddress('bech32m');
    await wallet.fund(address, 100_000n);
    await wallet.mine(1);
    const orphanHeight = tip + 1;
    const orphan = await block(orphanHeight);
    await indexer.applyBlock(await packedBlockAt(node, orphanHeight), orphanHeight);
    const orphanTxids = (await indexer.store.txs(orphanHeight, orphanHeight)).map((t) => t.txid);
    expect(orphanTxids.length).toBe(1);

    await node.rpc('invalidateblock', [orphan.hash]);
    // The replacement leaves the orphaned payment out (it goes back to the mempool).
    await node.rpc('generateblock', [await wallet.newAddress('bech32'), []]);
    const replacement = await block(orphanHeight);
    expect(replacement.hash).not.toBe(orphan.hash);
    const replacementRead = await packedBlockAt(node, orphanHeight);
    await expect(indexer.applyBlock(replacementRead, orphanHeight)).rejects.toThrow(/does not extend/);
    await indexer.rollback(orphanHeight);
    await indexer.applyBlock(replacementRead, orphanHeight);
    expect(await indexer.store.tip()).toEqual({ height: orphanHeight, hash: replacement.hash });
    expect(await indexer.store.txs(orphanHeight, orphanHeight)).toEqual([]);
    expect(await indexer.store.spent(orphanHeight, orphanHeight)).toEqual([]);
  });
});
