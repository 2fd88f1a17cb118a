import { createLabelTable } from '../src/label-table';
import { labelTweak } from '../src/tweak';
import { loadSecp256k1Backend } from '../src/load-backend';
import type { TransactionScanner } from '../src/backend';

const scanPriv = new Uint8Array(32).fill(3);
const spendPriv = new Uint8Array(32).fill(5);

describe.each(['noble', 'wasm'] as const)('the compact label table, step-by-step scan (%s)', (name) => {
  const backend = loadSecp256k1Backend(name);
  const spend = backend.baseMul(spendPriv);
  const spendPub = backend.toCompressed(spend);
  const labelPoint = (m: number) => backend.baseMul(labelTweak(scanPriv, m));

  it('adds each label once and lists them ascending', () => {
    const table = createLabelTable(backend, spend, spendPub, undefined);
    for (const m of [0, 7, 3, 7, 0, 40]) table.add(scanPriv, m);
    expect(table.count()).toBe(4);
    expect(table.list()).toEqual([0, 3, 7, 40]);
    expect([0, 1, 2, 3].map((slot) => table.m(slot))).toEqual([0, 7, 3, 40]);
    expect(() => table.add(scanPriv, -1)).toThrow(RangeError);
  });

  it('gives back L_m for every slot, past the decoded ones, from the compressed buffer', () => {
    const table = createLabelTable(backend, spend, spendPub, undefined);
    for (let m = 0; m < 40; m++) table.add(scanPriv, m);
    for (const slot of [0, 15, 16, 39]) expect(backend.equals(table.point(slot), labelPoint(slot))).toBe(true);
  });

  it('finds B_spend and every B_m, and their negations, and nothing else', () => {
    const table = createLabelTable(backend, spend, spendPub, undefined);
    for (let m = 0; m < 300; m++) table.add(scanPriv, m);
    expect(table.findSpendKey(spend, false)).toEqual({ label: null });
    expect(table.findSpendKey(backend.negate(spend), true)).toEqual({ label: null });
    expect(table.findSpendKey(spend, true)).toBeUndefined();
    for (const m of [0, 1, 150, 299]) {
      const bm = backend.add(spend, labelPoint(m))!;
      expect(table.findSpendKey(bm, false)).toEqual({ label: m });
      expect(table.findSpendKey(backend.negate(bm), true)).toEqual({ label: m });
      expect(table.findSpendKey(backend.negate(bm), false)).toBeUndefined();
    }
    expect(table.findSpendKey(backend.add(spend, labelPoint(300)), false)).toBeUndefined();
    expect(table.everySpendKeyFinite()).toBe(true);
  });
});

describe('the compact label table with a whole-transaction scanner', () => {
  it('hands each B_m to the scanner under its slot and keeps no point of its own', () => {
    const backend = loadSecp256k1Backend('noble');
    const spend = backend.baseMul(spendPriv);
    const handed: Array<[string, number]> = [];
    const scanner: TransactionScanner<ReturnType<typeof backend.baseMul>> = {
      addSpendKey: (point, slot) => handed.push([Buffer.from(backend.toCompressed(point)).toString('hex'), slot]),
      scan: () => null,
      scanMany: () => [],
      scanTweaks: () => [],
    };
    const table = createLabelTable(backend, spend, backend.toCompressed(spend), scanner);
    for (const m of [0, 9, 9, 2]) table.add(scanPriv, m);
    const expected = (m: number) =>
      Buffer.from(backend.toCompressed(backend.add(spend, backend.baseMul(labelTweak(scanPriv, m))))).toString('hex');
    expect(handed).toEqual([
      [expected(0), 0],
      [expected(9), 1],
      [expected(2), 2],
    ]);
    expect(table.list()).toEqual([0, 2, 9]);
    // the spend keys live in the scanner's table only
    expect(table.findSpendKey(backend.add(spend, backend.baseMul(labelTweak(scanPriv, 9))), false)).toBeUndefined();
  });
});
