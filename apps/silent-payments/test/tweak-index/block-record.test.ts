import { createHash, randomBytes } from 'node:crypto';
import { computeTweaks, loadSecp256k1Backend, packRpcBlock, scanInputsFromRpc } from '@repo/bip352';
import { readBlock, spentOutpointHashes, type RpcBlock } from '../../src/tweak-index/block-record';

// BlindBit's short hash of a spent outpoint, as
// docs/silent-payments.md, "The tweak index (light wallets)" gives it: the first 8 bytes of
// SHA-256(txid in internal order ‖ vout u32 LE ‖ the spending block's hash in internal order),
// written out here byte by byte.
describe('the spent outpoints’ short hashes', () => {
  const txid = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
  const blockHash = '0000000000000000000123456789abcdef0123456789abcdef0123456789abcd';
  const expected = (tx: string, vout: number): string => {
    const message = Buffer.concat([
      Buffer.from(tx, 'hex').reverse(),
      Buffer.from([vout & 0xff, (vout >>> 8) & 0xff, (vout >>> 16) & 0xff, vout >>> 24]),
      Buffer.from(blockHash, 'hex').reverse(),
    ]);
    return createHash('sha256').update(message).digest().subarray(0, 8).toString('hex');
  };

  it('hashes the txid and block hash in internal order and the vout little-endian', () => {
    expect(Buffer.from(spentOutpointHashes([{ txid, vout: 0x01020304 }], blockHash)[0]!).toString('hex')).toBe(expected(txid, 0x01020304));
  });

  it('gives each outpoint of a block its own hash', () => {
    const other = 'ff'.repeat(32);
    const hashes = spentOutpointHashes(
      [
        { txid, vout: 0 },
        { txid: other, vout: 7 },
        { txid, vout: 1 },
      ],
      blockHash,
    );
    expect(hashes.map((h) => Buffer.from(h).toString('hex'))).toEqual([expected(txid, 0), expected(other, 7), expected(txid, 1)]);
    expect(spentOutpointHashes([], blockHash)).toEqual([]);
  });
});

/** A block whose hash is its header's: version 1, no parent, `tx` as given. */
function blockOf(tx: RpcBlock['tx']): RpcBlock {
  const fields = { version: 1, merkleroot: 'ab'.repeat(32), time: 1_700_000_000, bits: '207fffff', nonce: 7 };
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  const header = Buffer.concat([
    u32(fields.version),
    Buffer.alloc(32),
    Buffer.from(fields.merkleroot, 'hex').reverse(),
    u32(fields.time),
    u32(Number.parseInt(fields.bits, 16)),
    u32(fields.nonce),
  ]);
  const hash = createHash('sha256').update(createHash('sha256').update(header).digest()).digest().reverse().toString('hex');
  return { ...fields, hash, height: 5, tx };
}

describe('reading a block into the index', () => {
  it('refuses a block whose taproot spend comes without the height of the output it spends', async () => {
    const taproot = { hex: `5120${'11'.repeat(32)}` };
    const block = blockOf([
      { txid: 'c0'.repeat(32), vin: [{ coinbase: '00' }], vout: [{ value: 50, n: 0, scriptPubKey: taproot }] },
      {
        txid: 'a1'.repeat(32),
        vin: [{ txid: 'b2'.repeat(32), vout: 0, txinwitness: ['22'.repeat(64)], prevout: { scriptPubKey: taproot } }],
        vout: [{ value: 1, n: 0, scriptPubKey: taproot }],
      },
    ]);
    const backend = loadSecp256k1Backend('noble');
    await expect(readBlock(packRpcBlock(block), backend)).rejects.toThrow(`tx ${'a1'.repeat(32)}: a prevout without its height`);
    block.tx[1]!.vin[0]!.prevout!.height = 4;
    const record = await readBlock(packRpcBlock(block), backend);
    expect(record.spent).toEqual([{ txid: 'b2'.repeat(32), vout: 0, spender: 'a1'.repeat(32), outHeight: 4 }]);
  });

  it('gives every eligible transaction its tweak, past the first run of 256, and leaves the others out', async () => {
    const noble = loadSecp256k1Backend('noble');
    const taproot = (n: number) => ({ value: 0.001, n, scriptPubKey: { hex: `5120${randomBytes(32).toString('hex')}` } });
    const txs: RpcBlock['tx'] = [{ txid: randomBytes(32).toString('hex'), vin: [{ coinbase: '00' }], vout: [taproot(0)] }];
    for (let i = 0; i < 300; i++) {
      const key = noble.toCompressed(noble.baseMul(Uint8Array.from(randomBytes(32))));
      // every tenth spends a P2WSH output: no key BIP-352 reads, so no tweak
      const prevout = i % 10 === 9 ? `0020${randomBytes(32).toString('hex')}` : `0014${randomBytes(20).toString('hex')}`;
      txs.push({
        txid: randomBytes(32).toString('hex'),
        vin: [
          {
            txid: randomBytes(32).toString('hex'),
            vout: i,
            txinwitness: ['30'.repeat(71), Buffer.from(key).toString('hex')],
            prevout: { height: 1, scriptPubKey: { hex: prevout } },
          },
        ],
        vout: [taproot(0), taproot(1)],
      });
    }
    const record = await readBlock(packRpcBlock(blockOf(txs)), loadSecp256k1Backend('native'));
    const expected = txs.slice(1).flatMap((tx) => {
      const tweak = computeTweaks([scanInputsFromRpc(tx.vin)], noble)[0];
      return tweak === null || tweak === undefined ? [] : [{ txid: tx.txid, tweak: Buffer.from(tweak).toString('hex'), outputs: 2 }];
    });
    expect(expected).toHaveLength(270);
    expect(record.txs.map((t) => ({ txid: t.txid, tweak: Buffer.from(t.tweak).toString('hex'), outputs: t.outputs.length }))).toEqual(
      expected,
    );
    expect(record.txs[269]!.outputs.map((o) => o.value)).toEqual([100_000n, 100_000n]);
  });
});
