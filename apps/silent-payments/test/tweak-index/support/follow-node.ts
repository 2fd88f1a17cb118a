import { packBlockAnswer, type PackedBlockAnswer } from '@repo/bip352';
import type { RegtestNode } from '@repo/regtest';
import type { RpcBlock, RpcBlockTx } from '../../../src/tweak-index/block-record';
import type { TweakIndexer } from '../../../src/tweak-index/indexer';

/** Block `height` of the node's best chain, as `getblock <hash> 3` gives it. */
export async function blockAt(node: RegtestNode, height: number): Promise<RpcBlock> {
  return node.rpc<RpcBlock>('getblock', [await node.rpc<string>('getblockhash', [height]), 3]);
}

/**
 * Block `height` of the node's best chain as the scanner reads it (src/scanner/scan-block.ts,
 * fetchBlock): Core's answer read from its bytes by the native reader, which must take it.
 */
export async function packedBlockAt(node: RegtestNode, height: number): Promise<PackedBlockAnswer> {
  const hash = await node.rpc<string>('getblockhash', [height]);
  const { body } = await node.post(JSON.stringify({ jsonrpc: '2.0', id: 'block', method: 'getblock', params: [hash, 3] }));
  const packed = packBlockAnswer(body, 'block');
  if (packed === undefined) throw new Error(`block ${height}: the native reader gave up on Core's answer`);
  return packed;
}

/**
 * Feeds `indexer` up to the node's tip from `start`, rolling back first what the node no longer
 * has: what the service's block consumer does (src/tweak-index/scanner-consumer.ts), driven here
 * by the test so that it can look between blocks.
 */
export async function followNode(indexer: TweakIndexer, node: RegtestNode, start: number): Promise<void> {
  let tip = await indexer.store.tip();
  while (tip !== undefined && tip.hash !== (await node.rpc<string>('getblockhash', [tip.height]))) {
    await indexer.rollback(tip.height);
    tip = await indexer.store.tip();
  }
  const nodeTip = await node.rpc<number>('getblockcount');
  for (let h = (tip?.height ?? start - 1) + 1; h <= nodeTip; h += 1) await indexer.applyBlock(await packedBlockAt(node, h), h);
}

/**
 * Gives the indexer the node's mempool as the scanner's mempool pass does: what left it, then its
 * transactions, each input's `prevout` read from its parent (Core gives none for a mempool
 * transaction; the node runs with -txindex).
 */
export async function followMempool(indexer: TweakIndexer, node: RegtestNode): Promise<void> {
  const txids = await node.rpc<string[]>('getrawmempool');
  indexer.keepMempool(new Set(txids));
  const txs = await Promise.all(txids.map((txid) => node.rpc<RpcBlockTx>('getrawtransaction', [txid, 1])));
  for (const tx of txs) {
    for (const vin of tx.vin) {
      const parent = await node.rpc<RpcBlockTx>('getrawtransaction', [vin.txid, 1]);
      vin.prevout = { scriptPubKey: { hex: parent.vout[vin.vout!]!.scriptPubKey.hex } };
    }
  }
  indexer.addMempool(txs);
}
