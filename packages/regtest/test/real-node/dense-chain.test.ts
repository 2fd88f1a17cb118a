import { buildDenseChain, startRegtestNode, type RegtestNode } from '../../src';

describe('buildDenseChain', () => {
  let node: RegtestNode;
  beforeAll(async () => {
    node = await startRegtestNode();
  });
  afterAll(() => node?.close());

  it('mines blocks full of one-input, two-output transactions spending P2TR and P2WPKH outputs', async () => {
    const chain = await buildDenseChain(node, { blocks: 3, txsPerBlock: 60, wallets: 3 });
    expect(chain.tipHeight - chain.firstHeight).toBe(2);
    expect(chain.transactions).toBe(180);
    expect(await node.rpc<number>('getblockcount')).toBe(chain.tipHeight);
    const inputTypes = new Set<string>();
    for (let height = chain.firstHeight; height <= chain.tipHeight; height++) {
      const hash = await node.rpc<string>('getblockhash', [height]);
      const block = await node.rpc<{
        weight: number;
        tx: Array<{
          vin: Array<{ coinbase?: string; prevout?: { scriptPubKey: { type: string } } }>;
          vout: Array<{ scriptPubKey: { type: string } }>;
        }>;
      }>('getblock', [hash, 3]);
      expect(block.tx).toHaveLength(61);
      expect(chain.weights[height - chain.firstHeight]).toBe(block.weight);
      for (const tx of block.tx.slice(1)) {
        expect(tx.vin).toHaveLength(1);
        expect(tx.vout.map((o) => o.scriptPubKey.type).sort()).toEqual(['witness_v0_keyhash', 'witness_v1_taproot']);
        inputTypes.add(tx.vin[0]!.prevout!.scriptPubKey.type);
      }
    }
    expect([...inputTypes].sort()).toEqual(['witness_v0_keyhash', 'witness_v1_taproot']);
    // the wallets are left unloaded (a reload rescans the dense blocks); one loads again with its coins
    expect(await node.rpc<string[]>('listwallets')).toEqual([]);
    await node.rpc('loadwallet', ['dense-1']);
    expect(await node.rpc<number>('getbalance', [], 'dense-1')).toBeGreaterThan(0);
  }, 120_000);
});
