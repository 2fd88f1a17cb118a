import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadScanAddon } from '../src/backends/native';
import {
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  labeledSpendPub,
  loadSecp256k1Backend,
  type ScanOutput,
  type TransactionToScan,
} from '../src';
import { hex, key, p2tr, p2trSpend, p2wpkhSpend, pub, xonly } from './support/spends';

/**
 * Receiver.scanTransactions (native/README.md, "Scanning many transactions"): the native scanner's
 * scanMany, which shares the inversions of runs of eight transactions and multiplies their ECDH
 * points at once in AVX-512 IFMA lanes (native/ecmult-lanes.h) where the CPU has them, against
 * scanTransaction one by one (whose multiplication is libsecp256k1's secp256k1_ecmult).
 */
const native = loadSecp256k1Backend('native');
const noble = loadSecp256k1Backend('noble');
const addon = loadScanAddon();

const scanPriv = key();
const spendPub = pub(key());
const address = encodeSilentPaymentAddress(pub(scanPriv), spendPub, 'signet');
const labeled = (m: number): string => encodeSilentPaymentAddress(pub(scanPriv), labeledSpendPub(scanPriv, spendPub, m), 'signet');

/**
 * A mix of the transactions a block holds: paying the receiver (unlabelled, labelled, several
 * times: k > 0), paying someone else, with no taproot output, with no eligible input, and one
 * malformed (its inputs not an array), with one and with two input keys.
 */
function transactions(count: number, labels: number[]): TransactionToScan[] {
  const txs: TransactionToScan[] = [];
  for (let i = 0; i < count; i++) {
    const inputs = i % 3 === 0 ? [p2trSpend(), p2wpkhSpend()] : [i % 2 === 0 ? p2trSpend() : p2wpkhSpend()];
    const kind = i % 7;
    let outputs: ScanOutput[];
    if (kind === 5)
      outputs = [{ index: 0, script: Uint8Array.from([0, 0x14, ...new Uint8Array(20)]) }]; // no taproot output
    else if (kind === 6)
      outputs = [
        { index: 0, script: p2tr(xonly(key())) },
        { index: 1, script: p2tr(xonly(key())) },
      ]; // someone else
    else {
      const recipients = [address, ...labels.slice(0, 2).map(labeled), address].slice(0, 1 + (i % 4));
      const paid = [...createSilentPaymentOutputs(inputs, recipients).values()].flat();
      outputs = [...paid, xonly(key())].map((x, index) => ({ index, script: p2tr(x) }));
    }
    if (i === 4)
      txs.push({ inputs: [{ ...inputs[0]!, witness: [], prevoutScript: Uint8Array.from([0x00, 0x20, ...new Uint8Array(32)]) }], outputs }); // P2WSH: not eligible
    else if (i === 9) txs.push({ inputs: 'not an array' as unknown as [], outputs });
    else txs.push({ inputs, outputs });
  }
  return txs;
}

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** n - d: the private key of the negated public key. */
const negated = (d: Uint8Array): Uint8Array =>
  Uint8Array.from(Buffer.from((N - BigInt('0x' + hex(d))).toString(16).padStart(64, '0'), 'hex'));

/** An x-only key with no point (x^3 + 7 not a square). */
function offCurveX(): Uint8Array {
  for (;;) {
    const x = key();
    if (noble.pointFromCompressed(Uint8Array.from([2, ...x])) === null) return x;
  }
}

/**
 * Transactions with several input keys, some of which are no keys, paying the receiver: what
 * scanMany's run does for them (keys_defer: the keys' square roots eight at a time, one
 * inversion of A for the run) must give what scan_tx's parse gives. Inputs that are no keys are
 * added after the payment is made (the sender cannot spend them), with an outpoint never the
 * smallest; a key and its negation sum to nothing.
 */
function severalKeys(labels: number[]): TransactionToScan[] {
  const junkTxid = 'ff'.repeat(32);
  const offCurve = { ...p2wpkhSpend(), txid: junkTxid, witness: [new Uint8Array(71), Uint8Array.from([3, ...offCurveX()])] };
  const aboveP = { ...p2trSpend(), txid: junkTxid, prevoutScript: p2tr(new Uint8Array(32).fill(0xff)) }; // x >= p
  const offCurveTaproot = { ...p2trSpend(), txid: junkTxid, prevoutScript: p2tr(offCurveX()) };
  const d = key();
  const shapes = [
    { paying: [p2wpkhSpend(), p2trSpend()], junk: [offCurve] },
    { paying: [p2trSpend()], junk: [aboveP, offCurveTaproot] }, // one key left of three
    { paying: [p2wpkhSpend(d), p2wpkhSpend(negated(d)), p2trSpend()], junk: [] }, // P + (-P) + Q = Q
    { paying: Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? p2trSpend() : p2wpkhSpend())), junk: [offCurve] }, // more keys than lanes
    { paying: [p2wpkhSpend(), p2wpkhSpend(), p2trSpend()], junk: [] },
  ];
  const txs: TransactionToScan[] = shapes.map(({ paying, junk }, i) => {
    const recipients = i === 1 && labels.length > 0 ? [labeled(labels[0]!)] : [address, address].slice(0, 1 + (i % 2));
    const paid = [...createSilentPaymentOutputs(paying, recipients).values()].flat();
    return { inputs: [...junk, ...paying], outputs: [...paid, xonly(key())].map((x, index) => ({ index, script: p2tr(x) })) };
  });
  const p = p2wpkhSpend(d);
  txs.push({ inputs: [p, p2wpkhSpend(negated(d))], outputs: [{ index: 0, script: p2tr(xonly(key())) }] }); // A = infinity: not eligible
  txs.push({ inputs: [offCurve, aboveP], outputs: [{ index: 0, script: p2tr(xonly(key())) }] }); // no key at all
  return txs;
}

/** What scanTransaction gives for each, or the error it throws. */
function oneByOne(receiver: ReturnType<typeof createReceiver>, txs: TransactionToScan[]): Array<unknown> {
  return txs.map((tx) => {
    try {
      return receiver.scanTransaction(tx.inputs, tx.outputs);
    } catch (err) {
      return err;
    }
  });
}

/** Whether /proc/cpuinfo lists what the lanes need (undefined where there is no /proc). */
function cpuHasLanes(): boolean | undefined {
  if (!existsSync('/proc/cpuinfo')) return undefined;
  const flags = new Set((/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '').trim().split(/\s+/));
  return process.arch === 'x64' && ['avx512f', 'avx512dq', 'avx512ifma'].every((f) => flags.has(f));
}

describe('Receiver.scanTransactions', () => {
  it.each([
    ['change label only', [] as number[]],
    ['3 labels', [1, 2, 3]],
    [
      '1,000 labels (the search over the outputs: all of them lifted, eight square roots at once)',
      Array.from({ length: 1000 }, (_, i) => i + 1),
    ],
  ])(
    'gives what scanTransaction gives, transaction by transaction, in runs of every length: %s',
    (_name, labels) => {
      const receiver = createReceiver({ scanPriv, spendPub, labels, backend: native });
      let found = 0;
      // 1 (alone), 2 (below the lanes' threshold), 8 (one full run), 21 (full runs and a partial one)
      for (const count of [1, 2, 8, 21]) {
        const txs = transactions(count, labels);
        const expected = oneByOne(receiver, txs);
        const many = receiver.scanTransactions(txs);
        expect(many).toEqual(expected);
        found += expected.filter(Array.isArray).reduce((n, f) => n + (f as unknown[]).length, 0);
        if (count === 21) {
          expect(many[9]).toBeInstanceOf(TypeError);
          expect(many[4]).toEqual([]);
        }
      }
      expect(found).toBeGreaterThan(20);
    },
    60_000,
  );

  it.each([
    ['change label only', [] as number[]],
    ['1,000 labels', Array.from({ length: 1000 }, (_, i) => i + 1)],
  ])('gives what scanTransaction gives for several input keys, some of them no keys: %s', (_name, labels) => {
    const receiver = createReceiver({ scanPriv, spendPub, labels, backend: native });
    const several = severalKeys(labels);
    const expected = oneByOne(receiver, several);
    // the one-by-one scan finds every payment (all outputs but the last, someone else's); a key
    // and its negation, or no key at all, pay no one
    expect(expected.slice(0, 5).map((f) => (f as unknown[]).length)).toEqual(several.slice(0, 5).map((tx) => tx.outputs.length - 1));
    expect(expected.slice(5)).toEqual([[], []]);
    // alone, together in one run, and spread among ordinary transactions across runs
    const mixed = transactions(16, labels);
    mixed.splice(3, 0, ...several.slice(0, 4));
    mixed.splice(13, 0, ...several.slice(4));
    expect(receiver.scanTransactions(several)).toEqual(expected);
    expect(receiver.scanTransactions(mixed)).toEqual(oneByOne(receiver, mixed));
    for (const tx of several) expect(receiver.scanTransactions([tx])).toEqual(oneByOne(receiver, [tx]));
  });

  it('with 1,000 labels, finds what the noble backend finds where an output is on no point or above p, first or not, alone or beside payments (the run lifts each output with its lookups)', () => {
    const labels = Array.from({ length: 1000 }, (_, i) => i + 1);
    const receiver = createReceiver({ scanPriv, spendPub, labels, backend: native });
    const reference = createReceiver({ scanPriv, spendPub, labels, backend: noble });
    const aboveP = new Uint8Array(32).fill(0xff);
    const shapes: Array<(paid: Uint8Array[]) => Uint8Array[]> = [
      (paid) => [offCurveX(), ...paid], // the first output, whose square root comes with the inversion, on no point
      (paid) => [...paid, offCurveX()],
      (paid) => [aboveP, offCurveX(), ...paid],
      (paid) => [paid[0]!, offCurveX(), ...paid.slice(1), xonly(key())],
      () => [offCurveX()], // one output, on no point
      () => [offCurveX(), offCurveX()],
      (paid) => paid.slice(0, 1), // one output, paying
    ];
    const txs: TransactionToScan[] = [];
    for (let i = 0; i < 24; i++) {
      const inputs = i % 3 === 0 ? [p2trSpend(), p2wpkhSpend()] : [i % 2 === 0 ? p2trSpend() : p2wpkhSpend()];
      const recipients = [labeled(labels[i % 7]!), address, labeled(999)].slice(0, 1 + (i % 3));
      const paid = [...createSilentPaymentOutputs(inputs, recipients).values()].flat();
      const xs = shapes[i % shapes.length]!(paid);
      txs.push({ inputs, outputs: xs.map((x, index) => ({ index, script: p2tr(x) })) });
    }
    const expected = oneByOne(reference, txs);
    expect(expected.filter((f) => Array.isArray(f) && f.length > 0)).toHaveLength(18);
    for (const count of [1, 3, 8, 24]) expect(receiver.scanTransactions(txs.slice(0, count))).toEqual(expected.slice(0, count));
    expect(oneByOne(receiver, txs)).toEqual(expected);
  });

  it('answers the same on a backend without a transaction scanner (one by one)', () => {
    const txs = transactions(9, [1]);
    const receiver = createReceiver({ scanPriv, spendPub, labels: [1], backend: noble });
    expect(receiver.scanTransactions(txs)).toEqual(oneByOne(createReceiver({ scanPriv, spendPub, labels: [1], backend: native }), txs));
    expect(() => receiver.scanTransactions('no' as unknown as [])).toThrow(TypeError);
  });
});

describe('native scanMany', () => {
  it('rejects malformed arguments with an error naming the argument, never a crash', () => {
    const handle = addon.createScanner(scanPriv, native.pointFromCompressed(spendPub) as Uint8Array);
    const one = new Uint32Array([1]);
    const args = (over: Partial<Record<string, unknown>>): unknown[] => {
      const a = { keys: new Uint8Array(33), keyCounts: one, outpoints: new Uint8Array(36), xs: new Uint8Array(32), xsCounts: one, ...over };
      return [handle, a.keys, a.keyCounts, a.outpoints, a.xs, a.xsCounts, 10];
    };
    const call = (over: Partial<Record<string, unknown>>) => (addon.scanMany as (...a: unknown[]) => Buffer)(...args(over));
    expect(() => call({ keys: new Uint8Array(32) })).toThrow(/keys: expected 33 bytes for each key counted/);
    expect(() => call({ xs: new Uint8Array(64) })).toThrow(/xs: expected 32 bytes for each output counted/);
    expect(() => call({ outpoints: new Uint8Array(35) })).toThrow(/one outpoint a transaction/);
    expect(() => call({ keyCounts: new Uint8Array(4) })).toThrow(/keyCounts: expected a Uint32Array/);
    expect(() => call({ xsCounts: new Uint32Array([1, 1]) })).toThrow(/one count of each/);
    expect(() => (addon.scanMany as (...a: unknown[]) => Buffer)(handle)).toThrow(/scanMany\(handle, keys/);
    // well formed: one transaction, its answer (a key of zeros is no key: not eligible, -1)
    expect(call({}).readInt32BE(0)).toBe(-1);
  });

  it('answers "not eligible" (-1) where the input keys sum to nothing, alone and in a run, as scan does', () => {
    const handle = addon.createScanner(scanPriv, native.pointFromCompressed(spendPub) as Uint8Array);
    const d = key();
    const cancelling = Uint8Array.from([...pub(d), ...pub(negated(d))]);
    const outpoint = new Uint8Array(36).fill(1);
    const xs = xonly(key());
    expect(addon.scan(handle, cancelling, outpoint, xs, 10, false)).toBe(-1);
    // a run: two pairs that cancel between two that do not (their answer: no match, 0)
    const keys = [cancelling, Uint8Array.from([...pub(key()), ...pub(key())]), cancelling, Uint8Array.from([...pub(key()), ...pub(key())])];
    for (const count of [1, 4]) {
      const out = addon.scanMany(
        handle,
        Uint8Array.from(keys.slice(0, count).flatMap((k) => [...k])),
        new Uint32Array(count).fill(2),
        new Uint8Array(36 * count).fill(1),
        Uint8Array.from(Array.from({ length: count }, () => [...xs]).flat()),
        new Uint32Array(count).fill(1),
        10,
        false,
      );
      const answers = Array.from({ length: count }, (_, i) => out.readInt32BE(i * (4 + 44)));
      expect(answers).toEqual([-1, 0, -1, 0].slice(0, count));
    }
  });
});

describe('the 8-lane multiplication (AVX-512 IFMA)', () => {
  it('is used exactly where the CPU has AVX-512 F, DQ and IFMA', () => {
    const expected = cpuHasLanes();
    if (expected === undefined) expect([0, 8]).toContain(addon.lanes());
    else expect(addon.lanes()).toBe(expected ? 8 : 0);
  });

  it('gives what libsecp256k1 gives, on edge scalars (n − 1, λ, 1, 2^128, −1 − λ, …) and 40,000 random pairs', () => {
    const result = addon.lanesSelfTest(40_000);
    if (addon.lanes() === 0) expect(result).toBeNull();
    else expect(result).toEqual([0, 0]); // none differs; no lane met Z = 0 (recomputed)
  });

  it.each([
    ['one label (the search by the spend keys)', [1]],
    [
      '1,000 labels (the search by the outputs: its lifts and its k = 0 inversions in the exponentiations of the run, one by one without lanes)',
      Array.from({ length: 1000 }, (_, i) => i + 1),
    ],
  ])('is turned off by BIP352_SCAN_LANES=0, and the answers stay the same: %s', (_name, labels) => {
    const script = `
      const { loadScanAddon } = require('./dist/backends/native');
      const { createReceiver, loadSecp256k1Backend } = require('./dist');
      const input = JSON.parse(process.argv[1], (k, v) => (v && v.bytes !== undefined ? Uint8Array.from(Buffer.from(v.bytes, 'hex')) : v));
      const receiver = createReceiver({ scanPriv: input.scanPriv, spendPub: input.spendPub, labels: input.labels, backend: loadSecp256k1Backend('native') });
      process.stdout.write(JSON.stringify({ lanes: loadScanAddon().lanes(), found: receiver.scanTransactions(input.txs) }));
    `;
    const txs = [...transactions(16, labels).filter((tx) => Array.isArray(tx.inputs)), ...severalKeys(labels)];
    const encoded = JSON.stringify({ scanPriv, spendPub, labels, txs }, (k, v: unknown) =>
      v instanceof Uint8Array ? { bytes: hex(v) } : v,
    );
    const run = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ['-e', script, encoded], {
        cwd: join(__dirname, '..'),
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const off = run({ BIP352_SCAN_LANES: '0' });
    const on = run({});
    expect(off.stderr).toBe('');
    expect(on.stderr).toBe('');
    const offOut = JSON.parse(off.stdout) as { lanes: number; found: unknown[] };
    const onOut = JSON.parse(on.stdout) as { lanes: number; found: unknown[] };
    expect(offOut.lanes).toBe(0);
    expect(onOut.lanes).toBe(addon.lanes());
    expect(offOut.found).toEqual(onOut.found);
    const expected = oneByOne(createReceiver({ scanPriv, spendPub, labels, backend: native }), txs);
    expect(expected.filter((f) => Array.isArray(f) && f.length > 0).length).toBeGreaterThan(10);
    expect(onOut.found).toEqual(JSON.parse(JSON.stringify(expected)));
  });
});
