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
 * Receiver.scanTransactions (README, "Scanning many transactions"): the native scanner's
 * scanMany, which multiplies up to eight transactions' ECDH points at once in AVX-512 IFMA lanes
 * (native/ecmult-lanes.h) where the CPU has them, against scanTransaction one by one (whose
 * multiplication is libsecp256k1's secp256k1_ecmult).
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

  it('is turned off by BIP352_SCAN_LANES=0, and the answers stay the same', () => {
    const script = `
      const { loadScanAddon } = require('./dist/backends/native');
      const { createReceiver, loadSecp256k1Backend } = require('./dist');
      const input = JSON.parse(process.argv[1], (k, v) => (v && v.bytes !== undefined ? Uint8Array.from(Buffer.from(v.bytes, 'hex')) : v));
      const receiver = createReceiver({ scanPriv: input.scanPriv, spendPub: input.spendPub, labels: [1], backend: loadSecp256k1Backend('native') });
      process.stdout.write(JSON.stringify({ lanes: loadScanAddon().lanes(), found: receiver.scanTransactions(input.txs) }));
    `;
    const txs = transactions(16, [1]).filter((tx) => Array.isArray(tx.inputs));
    const encoded = JSON.stringify({ scanPriv, spendPub, txs }, (k, v: unknown) => (v instanceof Uint8Array ? { bytes: hex(v) } : v));
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
    expect(onOut.found).toEqual(
      JSON.parse(JSON.stringify(oneByOne(createReceiver({ scanPriv, spendPub, labels: [1], backend: native }), txs))),
    );
  });
});
