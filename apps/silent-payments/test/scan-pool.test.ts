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
import { createSilentLogger } from '@repo/service';
import { createScanPool, type ScanJobTx, type ScanPool } from '../src/scan-pool';

const noble = loadSecp256k1Backend('noble');
const key = (): Uint8Array => new Uint8Array(randomBytes(32));
const pub = (d: Uint8Array): Uint8Array => noble.toCompressed(noble.baseMul(d));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const scanPriv = key();
const spendPub = pub(key());
const address = (m?: number) =>
  encodeSilentPaymentAddress(pub(scanPriv), m === undefined ? spendPub : labeledSpendPub(scanPriv, spendPub, m), 'regtest');

/** A transaction with one P2WPKH input paying `recipients`, plus a taproot output to no one, as getblock 3 shows it. */
function tx(i: number, recipients: string[]): ScanJobTx {
  const d = key();
  const vin: RpcVin[] = [
    {
      txid: hex(key()),
      vout: 0,
      scriptSig: { hex: '' },
      txinwitness: [hex(new Uint8Array(71).fill(1)), hex(pub(d))],
      prevout: { scriptPubKey: { hex: '0014' + hex(new Uint8Array(20)) } },
    },
  ];
  const inputs = scanInputsFromRpc(vin).map((input) => ({ ...input, privateKey: d }));
  const keys = recipients.length === 0 ? [] : [...createSilentPaymentOutputs(inputs, recipients).values()].flat();
  keys.push(noble.toXOnly(noble.baseMul(key())));
  return { i, vin, outs: keys.map((x, n) => [n, '5120' + hex(x)] as [number, string]) };
}

describe('scan pool (worker threads)', () => {
  let pool: ScanPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('finds in two workers at once exactly what this thread finds, and a label added later', async () => {
    const labels = [1, 2];
    pool = createScanPool({ workers: 2, scanPriv, spendPub, labels, backend: 'native', logger: createSilentLogger() });
    expect(pool.size).toBe(2);
    const local = createReceiver({ scanPriv, spendPub, labels, backend: loadSecp256k1Backend('native') });
    const blocks = Array.from({ length: 6 }, (_, b) =>
      Array.from({ length: 5 }, (_, i) => tx(i, i === 0 ? [] : [address(), address(b % 2 === 0 ? 1 : 2)].slice(0, i % 3))),
    );
    const results = await Promise.all(blocks.map((txs) => pool!.scan(txs)));
    results.forEach((result, b) => {
      const expected = blocks[b]!.map((t) => ({
        i: t.i,
        found: local.scanTransaction(
          scanInputsFromRpc(t.vin),
          t.outs.map(([index, h]) => ({ index, script: Buffer.from(h, 'hex') })),
        ),
      })).filter((r) => r.found.length > 0);
      expect(result).toEqual(expected);
    });
    expect(results.flat().length).toBeGreaterThan(6);

    // label 7 is unknown to the workers until added; every worker knows it after
    const paying7 = [tx(0, [address(7)]), tx(1, [address(7)])];
    expect(await pool.scan(paying7)).toEqual([]);
    pool.addLabel(7);
    const again = await Promise.all([pool.scan(paying7), pool.scan(paying7), pool.scan(paying7)]);
    for (const result of again) expect(result.map((r) => r.found.map((f) => f.label))).toEqual([[7], [7]]);
  });

  it('reports a transaction the library refuses instead of failing the block', async () => {
    pool = createScanPool({ workers: 1, scanPriv, spendPub, labels: [], backend: 'native', logger: createSilentLogger() });
    const bad = tx(3, [address()]);
    bad.vin[0]!.txid = 'not hex';
    const good = tx(4, [address()]);
    const result = await pool.scan([bad, good]);
    expect(result[0]).toMatchObject({ i: 3, found: [], error: expect.stringContaining('txid') });
    expect(result[1]!.i).toBe(4);
    expect(result[1]!.found).toHaveLength(1);
  });
});
