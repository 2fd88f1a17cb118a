import { randomBytes } from 'node:crypto';
import {
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  labeledSpendPub,
  loadSecp256k1Backend,
  scanInputsFromRpc,
  type RpcVin,
} from '@repo/bip352';
import { ChainRpcError } from '../src/chain-rpc';
import type { AddressBook } from '../src/address-book';
import type { RpcBlock, RpcTransaction } from '../src/scanner';
import type { ScanContext } from '../src/scanner/context';
import { asBlock, packedBlock, scanBlock } from '../src/scanner/scan-block';

const noble = loadSecp256k1Backend('noble');
const key = (): Uint8Array => new Uint8Array(randomBytes(32));
const pub = (d: Uint8Array): Uint8Array => noble.toCompressed(noble.baseMul(d));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const scanPriv = key();
const spendPub = pub(key());
const address = (m?: number) =>
  encodeSilentPaymentAddress(pub(scanPriv), m === undefined ? spendPub : labeledSpendPub(scanPriv, spendPub, m), 'regtest');

/** A transaction with one P2WPKH input paying `recipients`, plus a taproot output to no one, as getblock 3 shows it. */
function tx(recipients: string[]): RpcTransaction {
  const d = key();
  const vin: RpcVin[] = [
    {
      txid: hex(key()),
      vout: 3,
      scriptSig: { asm: '', hex: '' },
      txinwitness: [hex(new Uint8Array(71).fill(1)), hex(pub(d))],
      prevout: {
        generated: false,
        height: 7,
        value: 1,
        scriptPubKey: { asm: '0 …', hex: '0014' + hex(new Uint8Array(20)), type: 'witness_v0_keyhash' },
      },
      sequence: 4294967293,
    },
  ];
  const inputs = scanInputsFromRpc(vin).map((input) => ({ ...input, privateKey: d }));
  const keys = recipients.length === 0 ? [] : [...createSilentPaymentOutputs(inputs, recipients).values()].flat();
  keys.push(noble.toXOnly(noble.baseMul(key())));
  return {
    txid: hex(key()),
    vin,
    vout: keys.map((x, n) => ({
      value: (n + 1) / 1000,
      n,
      scriptPubKey: { hex: '5120' + hex(x), address: 'bcrt1p…', type: 'witness_v1_taproot' },
    })),
  };
}

const coinbase = (): RpcTransaction => ({
  txid: hex(key()),
  vin: [{ coinbase: '51', sequence: 4294967295 }],
  vout: [{ value: 50, n: 0, scriptPubKey: { hex: '5120' + hex(noble.toXOnly(noble.baseMul(key()))) } }],
});

/** A block as `getblock <hash> 3` prints it. */
function block(height: number, txs: RpcTransaction[]): RpcBlock {
  return { hash: hex(key()), height, previousblockhash: hex(key()), nTx: txs.length, tx: txs };
}

/** The block read as the scanner reads an answer the native reader leaves (scan-block.ts, packedBlock). */
const read = (b: RpcBlock) => packedBlock(b);

/** What scanBlock reads of the scanner's state: the receiver of the service's keys. */
function scanning(labels: number[] = []): { ctx: ScanContext; receiver: ReturnType<typeof createReceiver> } {
  const receiver = createReceiver({ scanPriv, spendPub, labels, backend: loadSecp256k1Backend('native') });
  return { ctx: { book: { receiver } as unknown as AddressBook } as ScanContext, receiver };
}

describe('the scan of a block (src/scanner/scan-block.ts)', () => {
  it('finds exactly what the receiver finds transaction by transaction, lists every spend, and a label added later', async () => {
    const labels = [1, 2];
    const { ctx, receiver } = scanning(labels);
    const local = createReceiver({ scanPriv, spendPub, labels, backend: loadSecp256k1Backend('noble') });
    // more than one run of 256 transactions: the scan yields to the event loop between runs
    const txs = [
      coinbase(),
      ...Array.from({ length: 300 }, (_, i) => tx(i % 7 === 0 ? [] : [address(), address(i % 2 === 0 ? 1 : 2)].slice(0, i % 3))),
    ];
    const result = await scanBlock(ctx, read(block(100, txs)));
    expect(result.packed).toMatchObject({ height: 100, nTx: 301 });
    expect(result.skipped).toEqual([]);
    const expected = txs
      .slice(1)
      .map((t) => {
        const found = local.scanTransaction(
          scanInputsFromRpc(t.vin),
          t.vout.map((o) => ({ index: o.n, script: Buffer.from(o.scriptPubKey.hex, 'hex') })),
        );
        return { txid: t.txid, found, values: found.map((f) => t.vout[f.index]!.value) };
      })
      .filter((hit) => hit.found.length > 0);
    expect(result.hits).toEqual(expected);
    expect(result.hits.length).toBeGreaterThan(100);
    // found in the second run of 256 too
    const secondRun = new Set(txs.slice(257).map((t) => t.txid));
    expect(result.hits.filter((h) => secondRun.has(h.txid)).length).toBeGreaterThan(10);
    // every input of the block but the coinbase's, with the spending txid
    expect(result.spends).toEqual(txs.slice(1).map((t) => ({ id: `${t.vin[0]!.txid}:3`, spentTxid: t.txid })));

    // label 7 is unknown until added
    const paying7 = [tx([address(7)]), tx([address(7)])];
    expect((await scanBlock(ctx, read(block(1, paying7)))).hits).toEqual([]);
    receiver.addLabel(7);
    expect((await scanBlock(ctx, read(block(1, paying7)))).hits.map((h) => h.found.map((f) => f.label))).toEqual([[7], [7]]);
  });

  it('reports a transaction the library refuses instead of failing the block', async () => {
    const { ctx } = scanning();
    const bad = tx([address()]);
    bad.vin[0]!.prevout!.scriptPubKey.hex = 'not hex';
    const good = tx([address()]);
    const result = await scanBlock(ctx, read(block(9, [bad, good])));
    expect(result.skipped).toEqual([{ txid: bad.txid, error: expect.stringContaining('prevout') as string }]);
    expect(result.hits.map((h) => h.txid)).toEqual([good.txid]);
  });

  it('words a transaction it cannot read as scanInputsFromRpc does, and still scans the rest', async () => {
    const { ctx } = scanning();
    const input = (t: RpcTransaction) => t.vin[0]!;
    const broken: Array<(t: RpcTransaction) => void> = [
      (t) => (input(t).prevout!.scriptPubKey.hex = 'not hex'),
      (t) => delete (input(t).prevout!.scriptPubKey as { hex?: string }).hex,
      (t) => (input(t).txinwitness![0] = 'abc'),
      (t) => (input(t).txinwitness = 'zz' as unknown as string[]),
      (t) => (input(t).txid = 'ab'.repeat(31)),
      (t) => (input(t).txid = 'zz'.repeat(32)),
      (t) => (input(t).scriptSig = { asm: '', hex: 'g0' }),
      (t) => delete input(t).vout,
    ];
    const bad = broken.map((mutate) => {
      const t = tx([address()]);
      mutate(t);
      return t;
    });
    const good = tx([address()]);
    const result = await scanBlock(ctx, read(block(9, [...bad, good])));
    const expected = bad.map((t) => {
      try {
        scanInputsFromRpc(t.vin);
      } catch (err) {
        return { txid: t.txid, error: (err as Error).message };
      }
      throw new Error(`scanInputsFromRpc read the broken transaction ${t.txid}`);
    });
    expect(result.skipped).toEqual(expected);
    expect(new Set(expected.map((e) => e.error)).size).toBe(broken.length);
    expect(result.hits.map((h) => h.txid)).toEqual([good.txid]);

    const output = tx([address()]);
    output.vout[0]!.scriptPubKey.hex = '5120' + 'zz'.repeat(32);
    expect((await scanBlock(ctx, read(block(10, [output])))).skipped).toEqual([
      { txid: output.txid, error: '"vout[0].scriptPubKey.hex" expected an even-length hex string' },
    ]);
  });

  it('refuses with a ChainRpcError (garbage) an answer that is not a block, and a block without prevouts', async () => {
    for (const answer of [null, 'block', { tx: 'no' }, { hash: 'h', height: '1', tx: [] }]) {
      expect(() => asBlock(answer)).toThrow(ChainRpcError);
      expect(() => asBlock(answer)).toThrow('getblock: the answer is not a block');
    }
    const ok = block(1, []);
    expect(asBlock(ok)).toBe(ok);
    const old = tx([address()]);
    delete old.vin[0]!.prevout;
    let failure: unknown;
    try {
      read(block(1, [old]));
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(ChainRpcError);
    expect(failure).toMatchObject({ kind: 'garbage', message: expect.stringContaining('verbosity 3') as string });
  });
});
