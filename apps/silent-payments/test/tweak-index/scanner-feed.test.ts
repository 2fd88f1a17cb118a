import { join } from 'node:path';
import { computeTweakData, loadSecp256k1Backend, scanInputsFromRpc } from '@repo/bip352';
import { buildSilentPayment, plainScript } from '@repo/chain-double';
import type { RpcBlock } from '../../src/tweak-index/block-record';
import { createTweakIndexer } from '../../src/tweak-index/indexer';
import { createTweakIndexStore } from '../../src/tweak-index/open-store';
import { tweakIndexConsumer } from '../../src/tweak-index/scanner-consumer';
import type { TweakIndexStore } from '../../src/tweak-index/store';
import { waitFor } from '../support/fake-relay';
import { randomAddressBook, useScannerParts } from '../support/scanner-parts';

// The tweak index fed by the scanner's block pass (src/tweak-index/scanner-consumer.ts;
// docs/silent-payments.md, "Block consumers"), on the index's own SQLite file.
describe('the tweak index as a consumer of the block pass', () => {
  const t = useScannerParts('sp-index-feed-');
  let index: TweakIndexStore | undefined;
  afterEach(async () => {
    await index?.close();
    index = undefined;
  });

  /** The index's blocks from `from`: height and hash. */
  const indexed = async (store: TweakIndexStore, from: number) =>
    (await store.blocks(from, 1_000_000)).map((b) => ({ height: b.height, hash: b.hash }));
  const nodeBlocks = async (from: number) => {
    const blocks: Array<{ height: number; hash: string }> = [];
    for (let height = from; height <= t.node.tipHeight(); height++) {
      blocks.push({ height, hash: await t.rpc.call<string>('getblockhash', [height]) });
    }
    return blocks;
  };

  it('indexes the blocks below the scanner it lacks, then every block, and follows a reorg', async () => {
    const { node, rpc } = t;
    const { book } = randomAddressBook();
    const paid = buildSilentPayment([node.fund('p2wpkh')], [{ address: book.baseAddress, sats: 2_000_000n }], plainScript(1));
    const other = buildSilentPayment([node.fund('p2tr')], [{ address: book.baseAddress, sats: 3_000_000n }], plainScript(2));
    const indexStart = node.tipHeight() + 1;
    node.mine(2);
    const first = node.tipHeight() + 1;
    node.mine(2, [paid.hex, other.hex]);
    index = createTweakIndexStore({ databaseUrl: undefined, sqliteFile: join(t.dir, 'tweak-index.sqlite') });
    await index.open();
    const indexer = createTweakIndexer(index, { backend: 'native' });
    const consumer = tweakIndexConsumer({ indexer, rpc, startHeight: () => indexStart });
    const scanner = t.start({ book, startHeight: first, mempool: false, consumers: [consumer] });
    await waitFor(() => scanner.status().scanned_height === node.tipHeight(), 20_000, 'the catch-up');

    // The two blocks below the scanner's start came from the node; the payment's block is indexed.
    expect(await indexed(index, indexStart)).toEqual(await nodeBlocks(indexStart));
    const txs = await index.txs(first, node.tipHeight());
    expect(txs.map((tx) => tx.txid)).toEqual(expect.arrayContaining([paid.txid, other.txid]));
    // Each tweak from its own transaction's inputs (the scanner's, handed to the index, not read again).
    const block = await rpc.call<RpcBlock>('getblock', [await rpc.call<string>('getblockhash', [first]), 3]);
    for (const tx of block.tx.filter((b) => b.txid === paid.txid || b.txid === other.txid)) {
      const expected = computeTweakData(scanInputsFromRpc(tx.vin), loadSecp256k1Backend('noble'))!.tweak;
      expect(Buffer.from(txs.find((t) => t.txid === tx.txid)!.tweak).toString('hex')).toBe(expected);
    }

    node.reorg(2);
    scanner.wake();
    await waitFor(() => scanner.status().scanned_height === node.tipHeight(), 20_000, 'the new chain');
    // The index is written before the scanner commits a block: it holds the new tip already.
    expect((await index.tip())?.hash).toBe(await rpc.call<string>('getbestblockhash'));
    expect(await indexed(index, indexStart)).toEqual(await nodeBlocks(indexStart));
    expect((await index.txs(first, node.tipHeight())).map((tx) => tx.txid)).not.toContain(paid.txid);
  });
});
