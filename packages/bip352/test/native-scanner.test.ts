import { ser32 } from '../src/bytes';
import { taggedHash } from '../src/hash';
import { loadScanAddon } from '../src/backends/native';
import {
  computeTweakData,
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  extractInputPublicKey,
  labeledSpendPub,
  loadSecp256k1Backend,
  smallestOutpoint,
  type ScanOutput,
} from '../src';
import { key, p2tr, p2trSpend, p2wpkhSpend, pub, xonly } from './support/spends';

/**
 * The native whole-transaction scanner (native/scan.c) against the step-by-step scan of
 * receiver.ts on the same libsecp256k1 operations, and its edge cases.
 */
const native = loadSecp256k1Backend('native');
const noble = loadSecp256k1Backend('noble');
const stepByStep = { ...native, createTransactionScanner: undefined };

const scanPriv = key();
const spendPriv = key();
const spendPub = pub(spendPriv);
const address = encodeSilentPaymentAddress(pub(scanPriv), spendPub, 'signet');
const labeled = (m: number): string => encodeSilentPaymentAddress(pub(scanPriv), labeledSpendPub(scanPriv, spendPub, m), 'signet');

function outputs(paid: Map<string, Uint8Array[]>, extra: number): ScanOutput[] {
  const keys = [...paid.values()].flat();
  for (let i = 0; i < extra; i++) keys.push(xonly(key()));
  // shuffled, so matches are not in k order among the outputs
  return keys.map((k, index) => ({ index, script: p2tr(k) })).sort(() => Math.random() - 0.5);
}

describe('native whole-transaction scan', () => {
  it.each([
    ['no label (x(T + B) search)', [] as number[]],
    ['3 labels (x(T + B) search)', [1, 2, 3]],
    ['1,000 labels (O − T and O + T looked up)', Array.from({ length: 1000 }, (_, i) => i + 1)],
    ['100,000 labels (O − T and O + T looked up)', Array.from({ length: 100_000 }, (_, i) => i + 1)],
  ])(
    'finds exactly what the step-by-step scan finds: %s',
    (_name, labels) => {
      const fast = createReceiver({ scanPriv, spendPub, labels, backend: native });
      const slow = createReceiver({ scanPriv, spendPub, labels, backend: stepByStep });
      const used = labels.length === 0 ? [0] : [0, labels[labels.length - 1] as number, labels[0] as number];
      let found = 0;
      for (let i = 0; i < 24; i++) {
        const inputs = i % 2 === 0 ? [p2trSpend(), p2wpkhSpend()] : [p2wpkhSpend()];
        const recipients = [address, ...used.map(labeled), address].slice(0, 1 + (i % 4));
        const outs = outputs(createSilentPaymentOutputs(inputs, recipients), i % 5);
        const expected = slow.scanTransaction(inputs, outs);
        expect(fast.scanTransaction(inputs, outs)).toEqual(expected);
        found += expected.length;
      }
      expect(found).toBeGreaterThan(24);
    },
    180_000,
  );

  it('finds the same with one input key, either parity (the ECDH on the isomorphic curve, one exponentiation)', () => {
    const fast = createReceiver({ scanPriv, spendPub, labels: [5], backend: native });
    const slow = createReceiver({ scanPriv, spendPub, labels: [5], backend: stepByStep });
    const parities = new Set<number>();
    let found = 0;
    let paid = 0;
    for (let i = 0; i < 40; i++) {
      const input = i % 2 === 0 ? p2trSpend() : p2wpkhSpend();
      parities.add(extractInputPublicKey(input)![0]!);
      const recipients = [address, labeled(5), labeled(0)].slice(0, 1 + (i % 3));
      paid += recipients.length;
      const outs = outputs(createSilentPaymentOutputs([input], recipients), i % 3);
      const expected = slow.scanTransaction([input], outs);
      expect(fast.scanTransaction([input], outs)).toEqual(expected);
      found += expected.length;
    }
    expect(parities).toEqual(new Set([2, 3]));
    expect(found).toBe(paid); // every payment found, by both
  });

  it('skips invalid input keys and output keys that are not curve points, and finds the rest', () => {
    const inputs = [p2wpkhSpend(), p2trSpend()];
    const paid = createSilentPaymentOutputs(inputs, [address, labeled(0)]);
    // an x-only key ≥ p and an x that is on no curve point next to the real outputs
    let offCurve = key();
    while (native.liftX(offCurve) !== null) offCurve = key();
    const outs = [...outputs(paid, 1), { index: 7, script: p2tr(new Uint8Array(32).fill(0xff)) }, { index: 8, script: p2tr(offCurve) }];
    const receiver = createReceiver({ scanPriv, spendPub, backend: native });
    expect(
      receiver
        .scanTransaction(inputs, outs)
        .map((f) => f.label)
        .sort(),
    ).toEqual([0, null]);
    // a P2WPKH input whose key is not a curve point: skipped, the other input alone decides
    const bad = { ...p2wpkhSpend(), witness: [new Uint8Array(71), Uint8Array.of(0x02, ...offCurve)] };
    const alone = createSilentPaymentOutputs([inputs[1]!], [address]);
    const tx = [inputs[1]!, bad];
    const paidAlone = [...alone.values()].flat().map((x, index) => ({ index, script: p2tr(x) }));
    // the smallest outpoint may be the bad input's: compare with the step-by-step scan
    expect(receiver.scanTransaction(tx, paidAlone)).toEqual(
      createReceiver({ scanPriv, spendPub, backend: stepByStep }).scanTransaction(tx, paidAlone),
    );
  });

  it('answers null when no input key is valid or the keys sum to infinity', () => {
    const scanner = native.createTransactionScanner!(scanPriv, native.pointFromCompressed(spendPub));
    const outpoint = new Uint8Array(36);
    const xs = xonly(key());
    expect(scanner.scan(Uint8Array.of(0x02, ...new Uint8Array(32).fill(0xff)), outpoint, xs, 10)).toBeNull();
    let offCurve = key();
    while (native.liftX(offCurve) !== null) offCurve = key();
    expect(scanner.scan(Uint8Array.of(0x03, ...offCurve), outpoint, xs, 10)).toBeNull(); // one key, x on no point
    expect(scanner.scan(Uint8Array.of(0x04, ...xonly(key())), outpoint, xs, 10)).toBeNull(); // one key, not 02 or 03
    const d = key();
    const p = pub(d);
    const minusP = Uint8Array.of(p[0] === 2 ? 3 : 2, ...p.subarray(1));
    expect(scanner.scan(Uint8Array.from([...p, ...minusP]), outpoint, xs, 10)).toBeNull();
    expect(scanner.scan(p, outpoint, xs, 10)).toEqual([]);
  });

  it('matches a label whose spend key is the point at infinity (P_k + L_m = t_k·G)', () => {
    const inputs = [p2wpkhSpend()];
    const data = computeTweakData(inputs)!;
    const ecdh = noble.toCompressed(noble.mul(noble.pointFromCompressed(Buffer.from(data.tweak, 'hex')), scanPriv));
    const t0 = taggedHash('BIP0352/SharedSecret', ecdh, ser32(0));
    const xs = xonly(t0);
    const scanner = native.createTransactionScanner!(scanPriv, native.pointFromCompressed(spendPub));
    const keys = extractInputPublicKey(inputs[0]!)!;
    const outpoint = smallestOutpoint(inputs);
    expect(scanner.scan(keys, outpoint, xs, 10)).toEqual([]);
    scanner.addSpendKey(null, 5);
    expect(scanner.scan(keys, outpoint, xs, 10)).toEqual([{ position: 0, k: 0, labelSlot: 5, tk: t0 }]);
    // k_max 0: nothing is looked at
    expect(scanner.scan(keys, outpoint, xs, 0)).toEqual([]);
    // with many labels (the search over outputs: x(O) == x(T) takes the plain way), and beside another output
    const spend = native.pointFromCompressed(spendPub);
    const many = native.createTransactionScanner!(scanPriv, spend);
    for (let m = 1; m <= 200; m++) many.addSpendKey(native.add(spend, native.baseMul(taggedHash('BIP0352/Label', scanPriv, ser32(m)))), m);
    many.addSpendKey(null, 5);
    const two = Uint8Array.from([...xonly(key()), ...xs]);
    expect(many.scan(keys, outpoint, two, 10)).toEqual([{ position: 1, k: 0, labelSlot: 5, tk: t0 }]);
  });

  it('rejects malformed arguments with an error naming the argument, never a crash', () => {
    const addon = require('../src/backends/native').loadScanAddon() as {
      createScanner: (...a: unknown[]) => object;
      addSpendKey: (...a: unknown[]) => void;
      scan: (...a: unknown[]) => unknown;
    };
    const spend = native.pointFromCompressed(spendPub) as Uint8Array;
    expect(() => addon.createScanner(new Uint8Array(31), spend)).toThrow(/scanKey: expected 32 bytes/);
    expect(() => addon.createScanner(new Uint8Array(32), spend)).toThrow(/not a valid scalar/);
    expect(() => addon.createScanner(scanPriv, spendPub)).toThrow(/65-byte/);
    expect(() => addon.createScanner('key', spend)).toThrow(/scanKey: expected 32 bytes/);
    const handle = addon.createScanner(scanPriv, spend);
    expect(() => addon.addSpendKey(handle, new Uint8Array(65), 1)).toThrow(/65-byte/);
    expect(() => addon.addSpendKey(handle, spend, -1)).toThrow(/label/);
    expect(() => addon.scan({}, new Uint8Array(33), new Uint8Array(36), new Uint8Array(32), 1, false)).toThrow(/handle/);
    expect(() => addon.scan(handle, new Uint8Array(32), new Uint8Array(36), new Uint8Array(32), 1, false)).toThrow(/33-byte/);
    expect(() => addon.scan(handle, new Uint8Array(33), new Uint8Array(35), new Uint8Array(32), 1, false)).toThrow(/36 bytes/);
    expect(() => addon.scan(handle, new Uint8Array(33), new Uint8Array(36), new Uint8Array(31), 1, false)).toThrow(/32-byte/);
    expect(() => addon.scan(handle, new Uint8Array(33), new Uint8Array(36), new Uint8Array(32))).toThrow(
      /scan\(handle, keys, outpoint, xs, kMax/,
    );
  });
});

describe('native field inversion by divsteps (the label search batch)', () => {
  it('gives the inverse libsecp256k1 gives, and x · 1/x = 1, on edge values (0, 1, 2, 3, p − 1, p − 2, 2^64, 2^255) and 300,000 others', () => {
    // runs in C: 8 edge values, then pseudo-random ones: a quarter each with a run of 64 zero
    // bits inside, a multiple of 2^128 (long runs of shifts), below 2^128, and as drawn
    expect(loadScanAddon().inverseSelfTest(300_000)).toBe(0);
  });
});

describe('native scanner in worker threads', () => {
  it('loads and scans alike in two worker threads started together', async () => {
    const { Worker } = await import('node:worker_threads');
    const { join } = await import('node:path');
    const inputs = [p2wpkhSpend(), p2trSpend()];
    const outs = outputs(createSilentPaymentOutputs(inputs, [address, labeled(0)]), 2);
    const expected = createReceiver({ scanPriv, spendPub, backend: stepByStep }).scanTransaction(inputs, outs);
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { createReceiver, loadSecp256k1Backend } = require(workerData.dist);
      const receiver = createReceiver({ scanPriv: workerData.scanPriv, spendPub: workerData.spendPub, backend: loadSecp256k1Backend('native') });
      parentPort.postMessage(receiver.scanTransaction(workerData.inputs, workerData.outs));`;
    const workerData = { dist: join(__dirname, '..', 'dist', 'index.js'), scanPriv, spendPub, inputs, outs };
    const run = (): Promise<unknown> =>
      new Promise((resolve, reject) => {
        const worker = new Worker(code, { eval: true, workerData });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    const results = await Promise.all([run(), run()]);
    expect(expected).toHaveLength(2);
    expect(results).toEqual([expected, expected]);
  });
});
