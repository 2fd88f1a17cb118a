import { randomBytes } from 'node:crypto';
import {
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  K_MAX,
  labeledSpendPub,
  loadSecp256k1Backend,
  NUMS_H_HEX,
  SilentPaymentError,
  type BackendName,
  type ScanOutput,
} from '../src';
import { cat, spend, type Kind } from './support/spends';

const noble = loadSecp256k1Backend('noble');
const BACKENDS: BackendName[] = ['noble', 'native', 'wasm'];

function privateKey(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}
const pub = (d: Uint8Array): Uint8Array => noble.toCompressed(noble.baseMul(d));
const xonly = (d: Uint8Array): Uint8Array => noble.toXOnly(noble.baseMul(d));
function outputsOf(paid: Map<string, Uint8Array[]>, extra = 2): ScanOutput[] {
  const keys = [...paid.values()].flat();
  for (let i = 0; i < extra; i++) keys.push(xonly(privateKey()));
  return keys.map((k, index) => ({ index, script: cat([0x51, 0x20], k) })).reverse();
}

const scanPriv = privateKey();
const spendPriv = privateKey();
const scanPub = pub(scanPriv);
const spendPub = pub(spendPriv);
const address = encodeSilentPaymentAddress(scanPub, spendPub, 'signet');
const labeled = (m: number): string => encodeSilentPaymentAddress(scanPub, labeledSpendPub(scanPriv, spendPub, m), 'signet');

describe('sending and scanning', () => {
  describe.each(BACKENDS)('on the %s backend', (name) => {
    const backend = loadSecp256k1Backend(name);

    it.each<Kind[]>([
      ['p2tr'],
      ['p2tr-script'],
      ['p2wpkh'],
      ['p2sh-p2wpkh'],
      ['p2pkh'],
      ['p2pkh-malleated'],
      ['p2tr', 'p2wpkh', 'p2pkh', 'p2sh-p2wpkh'],
    ])('finds what the sender created from %s inputs', (...kinds) => {
      const inputs = kinds.map((k) => spend(k));
      const paid = createSilentPaymentOutputs(inputs, [address, address, labeled(3), labeled(0)], { backend });
      const receiver = createReceiver({ scanPriv, spendPub, labels: [3], backend });
      const found = receiver.scanTransaction(inputs, outputsOf(paid));
      expect(found.map((f) => f.xonly).sort()).toEqual(
        [...paid.values()]
          .flat()
          .map((k) => Buffer.from(k).toString('hex'))
          .sort(),
      );
      expect(found.map((f) => f.label).sort()).toEqual([0, 3, null, null]);
      expect(found.map((f) => f.k).sort()).toEqual([0, 1, 2, 3]);
      for (const f of found) {
        // d = b_spend + tweak spends the output
        const d = noble.scalarAdd(spendPriv, Buffer.from(f.tweak, 'hex'));
        expect(Buffer.from(xonly(d)).toString('hex')).toBe(f.xonly);
      }
    });

    it('skips a transaction that spends a SegWit v2 output, and the sender refuses it', () => {
      const inputs = [spend('p2wpkh')];
      const paid = createSilentPaymentOutputs(inputs, [address], { backend });
      const withV2 = [...inputs, { ...spend('p2tr'), prevoutScript: cat([0x52, 0x20], new Uint8Array(32).fill(1)) }];
      const receiver = createReceiver({ scanPriv, spendPub, backend });
      expect(receiver.scanTransaction(inputs, outputsOf(paid))).toHaveLength(1);
      expect(receiver.scanTransaction(withV2, outputsOf(paid))).toEqual([]);
      expect(() => createSilentPaymentOutputs(withV2, [address], { backend })).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_INPUT' }),
      );
    });

    it('ignores a NUMS script-path input, with or without annex, and uncompressed keys', () => {
      const nums = spend('p2tr-script');
      nums.witness[2] = cat([0xc0], Buffer.from(NUMS_H_HEX, 'hex'));
      const withAnnex = { ...nums, witness: [...nums.witness, Uint8Array.of(0x50, 1, 2)] };
      const eligible = spend('p2wpkh');
      const paid = createSilentPaymentOutputs([eligible, nums], [address], { backend });
      const receiver = createReceiver({ scanPriv, spendPub, backend });
      // the NUMS input does not count: the same output is found as from the P2WPKH input alone
      expect(receiver.scanTransaction([eligible, nums], outputsOf(paid))).toHaveLength(1);
      expect(receiver.scanTransaction([eligible, withAnnex], outputsOf(paid))).toHaveLength(1);
      expect(() => createSilentPaymentOutputs([nums], [address], { backend })).toThrow(
        expect.objectContaining({ code: 'NO_ELIGIBLE_INPUTS' }),
      );
      expect(receiver.scanTransaction([nums], outputsOf(paid))).toEqual([]);
    });

    it('finds the same outputs with 1,000 labels as with the one label used', () => {
      const inputs = [spend('p2tr'), spend('p2wpkh')];
      const paid = createSilentPaymentOutputs(inputs, [labeled(537), labeled(999), address], { backend });
      const few = createReceiver({ scanPriv, spendPub, labels: [537, 999], backend });
      const many = createReceiver({ scanPriv, spendPub, labels: Array.from({ length: 1000 }, (_, i) => i + 1), backend });
      const a = few.scanTransaction(inputs, outputsOf(paid, 3));
      const b = many.scanTransaction(inputs, outputsOf(paid, 3));
      expect(a).toHaveLength(3);
      expect(b).toEqual(a);
    });

    it('finds the same outputs whichever search it picks (few or many labels, few or many outputs)', () => {
      const many = createReceiver({ scanPriv, spendPub, labels: Array.from({ length: 300 }, (_, i) => i + 1), backend });
      const few = createReceiver({ scanPriv, spendPub, labels: [7, 250], backend });
      for (let i = 0; i < 4; i++) {
        const inputs = [spend('p2wpkh'), spend('p2tr')];
        const recipients = [address, labeled(7), labeled(0), labeled(250), address].slice(0, 2 + i);
        // 2 or 40 extra outputs: few labels look P_k + L_m up among the outputs, 300 labels look output ∓ T up among the spend keys
        const outputs = outputsOf(createSilentPaymentOutputs(inputs, recipients, { backend }), i % 2 === 0 ? 2 : 40);
        const a = few.scanTransaction(inputs, outputs);
        const b = many.scanTransaction(inputs, outputs);
        expect(a).toHaveLength(recipients.length);
        expect(b).toEqual(a);
      }
    });

    it('returns [] without taproot outputs, without eligible inputs, or for other receivers', () => {
      const inputs = [spend('p2wpkh')];
      const paid = createSilentPaymentOutputs(inputs, [address], { backend });
      const receiver = createReceiver({ scanPriv, spendPub, backend });
      expect(receiver.scanTransaction(inputs, [{ index: 0, script: cat([0x00, 0x14], new Uint8Array(20)) }])).toEqual([]);
      expect(receiver.scanTransaction([{ ...inputs[0]!, witness: [] }], outputsOf(paid))).toEqual([]);
      const other = createReceiver({ scanPriv: privateKey(), spendPub, backend });
      expect(other.scanTransaction(inputs, outputsOf(paid))).toEqual([]);
    });
  });

  it('gives identical results on every backend for random transactions', () => {
    const receivers = BACKENDS.map((name) =>
      createReceiver({ scanPriv, spendPub, labels: [1, 2, 5], backend: loadSecp256k1Backend(name) }),
    );
    const kinds: Kind[] = ['p2tr', 'p2tr-script', 'p2wpkh', 'p2sh-p2wpkh', 'p2pkh', 'p2pkh-malleated'];
    for (let i = 0; i < 12; i++) {
      const inputs = [spend(kinds[i % kinds.length]!), spend(kinds[(i * 5 + 1) % kinds.length]!)];
      const recipients = [address, labeled(1 + (i % 5)), labeled(0)].slice(0, 1 + (i % 3));
      const outputs = outputsOf(createSilentPaymentOutputs(inputs, recipients));
      const [reference, ...others] = receivers.map((r) => r.scanTransaction(inputs, outputs));
      for (const other of others) expect(other).toEqual(reference);
      // outputs are found in k order: scanning stops at the first one paid to a label it does not know
      const known = (r: string): boolean => r === address || [0, 1, 2, 5].some((m) => r === labeled(m));
      const firstUnknown = recipients.findIndex((r) => !known(r));
      expect(reference).toHaveLength(firstUnknown === -1 ? recipients.length : firstUnknown);
    }
  });
});

describe('K_max', () => {
  const backend = loadSecp256k1Backend('native');

  it('lets a sender create K_max outputs for one group and refuses K_max + 1', () => {
    const inputs = [spend('p2wpkh')];
    const group = Array.from({ length: K_MAX }, () => address);
    expect(createSilentPaymentOutputs(inputs, group, { backend }).get(address)).toHaveLength(K_MAX);
    let error: unknown;
    try {
      createSilentPaymentOutputs(inputs, [...group, labeled(1)], { backend });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SilentPaymentError);
    expect((error as SilentPaymentError).code).toBe('K_MAX_EXCEEDED');
  });

  it('counts the limit per scan key, not per transaction', () => {
    const other = encodeSilentPaymentAddress(pub(privateKey()), spendPub, 'signet');
    const inputs = [spend('p2tr')];
    const paid = createSilentPaymentOutputs(inputs, [...Array.from({ length: K_MAX }, () => address), other], { backend });
    expect(paid.get(other)).toHaveLength(1);
  });
});

describe('createReceiver', () => {
  it('always scans the change label and rejects bad keys and labels', () => {
    const receiver = createReceiver({ scanPriv, spendPub, labels: [4, 4], backend: noble });
    receiver.addLabel(2);
    expect(receiver.labels()).toEqual([0, 2, 4]);
    expect(() => receiver.addLabel(-1)).toThrow(RangeError);
    expect(() => createReceiver({ scanPriv: new Uint8Array(31), spendPub, backend: noble })).toThrow(/"scanPriv"/);
    expect(() => createReceiver({ scanPriv: new Uint8Array(32), spendPub, backend: noble })).toThrow(SilentPaymentError);
    expect(() => createReceiver({ scanPriv, spendPub: Uint8Array.of(2, ...new Uint8Array(32)), backend: noble })).toThrow(/"spendPub"/);
  });

  it('uses the native backend by default', () => {
    expect(createReceiver({ scanPriv, spendPub }).backendName).toBe('native');
  });
});

describe('scan cost', () => {
  /** Counts the calls made to the backend's point operations (the step-by-step scan: no whole-transaction scanner). */
  function counting(name: BackendName): { backend: ReturnType<typeof loadSecp256k1Backend>; calls: () => number; reset: () => void } {
    const real = loadSecp256k1Backend(name);
    let n = 0;
    const backend = { ...real, createTransactionScanner: undefined };
    for (const method of ['pointFromCompressed', 'sumCompressed', 'liftX', 'add', 'sum', 'negate', 'mul', 'addTweak', 'baseMul'] as const) {
      const fn = real[method] as (...args: unknown[]) => unknown;
      (backend as Record<string, unknown>)[method] = (...args: unknown[]) => {
        n++;
        return fn.apply(real, args);
      };
    }
    return { backend, calls: () => n, reset: () => (n = 0) };
  }

  it('does one variable-base multiplication per transaction and a bounded number of point operations with 1,000 labels', () => {
    const inputs = [spend('p2tr'), spend('p2wpkh')];
    const outputs = outputsOf(new Map(), 2);
    const one = counting('native');
    const thousand = counting('native');
    const fewReceiver = createReceiver({ scanPriv, spendPub, backend: one.backend });
    const manyReceiver = createReceiver({
      scanPriv,
      spendPub,
      labels: Array.from({ length: 1000 }, (_, i) => i + 1),
      backend: thousand.backend,
    });
    one.reset();
    thousand.reset();
    const real = loadSecp256k1Backend('native');
    let muls = 0;
    const mulSpy = {
      ...real,
      createTransactionScanner: undefined,
      mul: (...args: Parameters<typeof real.mul>) => (muls++, real.mul(...args)),
    };
    createReceiver({ scanPriv, spendPub, backend: mulSpy }).scanTransaction(inputs, outputs);
    expect(muls).toBe(1);
    expect(fewReceiver.scanTransaction(inputs, outputs)).toEqual([]);
    expect(manyReceiver.scanTransaction(inputs, outputs)).toEqual([]);
    expect(one.calls()).toBeLessThanOrEqual(5);
    expect(thousand.calls()).toBeLessThanOrEqual(10);
  });

  it('scans a whole transaction in one native call, whatever the number of labels', () => {
    const inputs = [spend('p2tr'), spend('p2wpkh')];
    const real = loadSecp256k1Backend('native');
    let scans = 0;
    let pointOps = 0;
    const spy = { ...real };
    for (const method of ['sumCompressed', 'mul', 'baseMul', 'add', 'addTweak', 'liftX', 'negate'] as const) {
      const fn = real[method] as (...args: unknown[]) => unknown;
      (spy as Record<string, unknown>)[method] = (...args: unknown[]) => (pointOps++, fn.apply(real, args));
    }
    spy.createTransactionScanner = (key, point) => {
      const scanner = real.createTransactionScanner!(key, point);
      return { ...scanner, scan: (...args: Parameters<typeof scanner.scan>) => (scans++, scanner.scan(...args)) };
    };
    const receiver = createReceiver({ scanPriv, spendPub, labels: Array.from({ length: 1000 }, (_, i) => i + 1), backend: spy });
    pointOps = 0;
    const paid = createSilentPaymentOutputs(inputs, [address, labeled(777)]);
    expect(receiver.scanTransaction(inputs, outputsOf(paid))).toHaveLength(2);
    expect(receiver.scanTransaction(inputs, outputsOf(new Map()))).toEqual([]);
    expect(scans).toBe(2);
    expect(pointOps).toBe(0);
  });
});
