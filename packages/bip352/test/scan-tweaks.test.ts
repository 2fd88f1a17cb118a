import {
  computeTweakData,
  computeTweaks,
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  labeledSpendPub,
  loadSecp256k1Backend,
  type ScanInput,
  type TweakRow,
} from '../src';
import { hex, key, p2trSpend, p2wpkhSpend, pub, xonly } from './support/spends';

/**
 * What a light client does with a tweak index: computeTweaks (the index's side: input_hash·A of
 * many transactions in one call) and Receiver.scanTweaks (the wallet's side: b_scan·tweak, then
 * the outputs), on the native backend (native/README.md, "Tweaks") against noble's steps and
 * against scanTransaction of the same transactions.
 */
const native = loadSecp256k1Backend('native');
const noble = loadSecp256k1Backend('noble');

const scanPriv = key();
const spendPub = pub(key());
const address = encodeSilentPaymentAddress(pub(scanPriv), spendPub, 'signet');
const labeled = (m: number): string => encodeSilentPaymentAddress(pub(scanPriv), labeledSpendPub(scanPriv, spendPub, m), 'signet');

interface Tx {
  inputs: ScanInput[];
  outputs: Uint8Array[];
}

/** Transactions with one and two input keys paying the receiver (unlabelled, labelled, k > 0), someone else, or no one eligible. */
function transactions(count: number): Tx[] {
  return Array.from({ length: count }, (_, i) => {
    const inputs = i % 3 === 0 ? [p2trSpend(), p2wpkhSpend()] : [i % 2 === 0 ? p2trSpend() : p2wpkhSpend()];
    if (i % 5 === 4) return { inputs, outputs: [xonly(key()), xonly(key())] };
    const recipients = [address, labeled(1), labeled(0), address].slice(0, 1 + (i % 4));
    const paid = [...createSilentPaymentOutputs(inputs, recipients).values()].flat();
    return { inputs, outputs: [xonly(key()), ...paid] };
  });
}

const toScanOutputs = (xs: Uint8Array[]) => xs.map((x, index) => ({ index, script: Uint8Array.from([0x51, 0x20, ...x]) }));

describe('computeTweaks', () => {
  it('gives computeTweakData tweak of every transaction, null where it gives null, in runs of any length', () => {
    const txs = transactions(21).map((tx) => tx.inputs);
    // not eligible: a P2WSH spend only, and no input at all
    txs.splice(3, 0, [{ ...txs[0]![0]!, witness: [], prevoutScript: Uint8Array.from([0x00, 0x20, ...new Uint8Array(32)]) }], []);
    const expected = txs.map((inputs) => computeTweakData(inputs, noble)?.tweak ?? null);
    expect(expected.filter((t) => t === null)).toHaveLength(2);
    for (const backend of [native, noble]) {
      for (const run of [1, 8, txs.length]) {
        expect(computeTweaks(txs.slice(0, run), backend).map((t) => (t === null ? null : hex(t)))).toEqual(expected.slice(0, run));
      }
    }
  });

  it('answers null for keys that sum to the point at infinity', () => {
    const d = key();
    const a = p2wpkhSpend(d); // its key as given (a taproot key would be lifted to even y)
    const negated = { ...p2wpkhSpend(), witness: [new Uint8Array(71), noble.toCompressed(noble.negate(noble.baseMul(d)))] };
    const b = p2trSpend();
    expect(
      computeTweaks(
        [
          [a, negated],
          [a, negated, b],
        ],
        native,
      ).map((t) => t && hex(t)),
    ).toEqual([null, computeTweakData([a, negated, b], noble)!.tweak]);
    expect(computeTweaks([[a, negated]], noble)).toEqual([null]);
  });
});

describe('Receiver.scanTweaks', () => {
  const txs = transactions(21);
  const rows: TweakRow[] = txs.map((tx) => ({ tweak: Buffer.from(computeTweakData(tx.inputs, noble)!.tweak, 'hex'), outputs: tx.outputs }));

  it.each([
    ['change only', [] as number[]],
    ['a label', [1]],
    ['1,000 labels', Array.from({ length: 1_000 }, (_, i) => i + 1)],
  ])('finds what scanTransaction finds in each row, native and noble alike (%s)', (_name, labels) => {
    const byTx = createReceiver({ scanPriv, spendPub, labels, backend: noble });
    const expected = txs.map((tx) => byTx.scanTransaction(tx.inputs, toScanOutputs(tx.outputs)));
    expect(expected.flat().length).toBeGreaterThan(15);
    for (const backend of [native, noble]) {
      const receiver = createReceiver({ scanPriv, spendPub, labels, backend });
      for (const run of [1, 8, rows.length]) expect(receiver.scanTweaks(rows.slice(0, run))).toEqual(expected.slice(0, run));
    }
  });

  it('finds nothing in a row whose tweak is not a curve point, and goes on with the next', () => {
    const paying = rows[0]!;
    const notAPoint = new Uint8Array(33);
    notAPoint[0] = 2;
    notAPoint.fill(0xff, 1); // x >= p
    const badPrefix = Uint8Array.from(paying.tweak);
    badPrefix[0] = 4;
    for (const backend of [native, noble]) {
      const receiver = createReceiver({ scanPriv, spendPub, backend });
      const [a, b, c] = receiver.scanTweaks([{ ...paying, tweak: notAPoint }, { ...paying, tweak: badPrefix }, paying]);
      expect([a, b]).toEqual([[], []]);
      expect(c).toEqual(receiver.scanTransaction(txs[0]!.inputs, toScanOutputs(txs[0]!.outputs)));
      expect((c as unknown[]).length).toBe(1);
    }
  });

  it('refuses rows that are not rows', () => {
    const receiver = createReceiver({ scanPriv, spendPub, backend: native });
    expect(() => receiver.scanTweaks('rows' as unknown as TweakRow[])).toThrow(TypeError);
    expect(() => receiver.scanTweaks([{ tweak: new Uint8Array(32), outputs: [] }])).toThrow(TypeError);
    expect(() => receiver.scanTweaks([{ tweak: rows[0]!.tweak, outputs: [new Uint8Array(31)] }])).toThrow(TypeError);
  });
});
