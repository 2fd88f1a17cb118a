import { SilentPaymentError } from '../src/errors';

describe('loadSecp256k1Backend', () => {
  afterEach(() => {
    jest.resetModules();
    jest.dontMock('secp256k1/bindings');
  });

  it('loads the three backends', () => {
    const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
    expect(['native', 'wasm', 'noble'].map((n) => loadSecp256k1Backend(n as 'native').name)).toEqual(['native', 'wasm', 'noble']);
  });

  it('refuses with a clear error, never a fallback, when the native addon is missing', () => {
    jest.resetModules();
    jest.doMock('secp256k1/bindings', () => {
      throw new Error("Cannot find module 'secp256k1/bindings'");
    });
    const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
    const { createReceiver } = require('../src/receiver') as typeof import('../src/receiver');
    const errors = require('../src/errors') as typeof import('../src/errors');
    expect(() => loadSecp256k1Backend('native')).toThrow(errors.SilentPaymentError);
    expect(() => loadSecp256k1Backend()).toThrow(/backend 'native' cannot be loaded \(Cannot find module/);
    const scanPriv = new Uint8Array(32).fill(1);
    const spendPub = Uint8Array.from(Buffer.from('031b84c5567b126440995d3ed5aaba0565d71e1834604819ff9c17f5e9d5dd078f', 'hex'));
    expect(() => createReceiver({ scanPriv, spendPub })).toThrow(/cannot be loaded/);
    // the noble reference still loads when asked for by name
    expect(loadSecp256k1Backend('noble').name).toBe('noble');
  });

  it('refuses the native backend when the scanner addon was not built', () => {
    jest.resetModules();
    const { SCAN_ADDON_PATH } = require('../src/backends/native') as typeof import('../src/backends/native');
    jest.doMock(SCAN_ADDON_PATH, () => {
      throw new Error(`Cannot find module '${SCAN_ADDON_PATH}'`);
    });
    const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
    expect(() => loadSecp256k1Backend('native')).toThrow(/backend 'native' cannot be loaded \(Cannot find module .*bip352_scan\.node/);
    expect(() => loadSecp256k1Backend('native')).toThrow(/npm run build/);
    jest.dontMock(SCAN_ADDON_PATH);
  });

  it('rejects an unknown backend name', () => {
    const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
    expect(() => loadSecp256k1Backend('gmp' as never)).toThrow(RangeError);
    expect(SilentPaymentError).toBeDefined();
  });
});

describe('matchSumX', () => {
  const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
  const noble = loadSecp256k1Backend('noble');
  const scalar = (i: number): Uint8Array => Uint8Array.from(require('node:crypto').createHash('sha256').update(`k${i}`).digest());
  const xOf = (s: Uint8Array): Uint8Array => Uint8Array.from([0x51, 0x20, ...noble.toXOnly(noble.baseMul(s))]);
  const P_BYTES = Uint8Array.from(Buffer.from('fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f', 'hex'));

  describe.each(['noble', 'native', 'wasm'] as const)('on the %s backend', (name) => {
    const backend = loadSecp256k1Backend(name);
    const point = (s: Uint8Array): unknown => backend.baseMul(s);
    const t = point(scalar(1));
    const addends = [point(scalar(2)), point(scalar(3))];
    const sum = (a: number, b: number): Uint8Array => xOf(noble.scalarAdd(scalar(a), scalar(b)));

    it('finds x(t + addend) among the outputs, addends first, then outputs, in order', () => {
      const outputs = [xOf(scalar(9)), sum(1, 3), sum(1, 2)];
      expect(backend.matchSumX(t, addends, outputs, 2)).toBe(0 * 3 + 2);
      expect(backend.matchSumX(t, [addends[1]], outputs, 2)).toBe(1);
      expect(backend.matchSumX(t, addends, [xOf(scalar(9))], 2)).toBe(-1);
    });

    it('matches the negated sum too (x only), and never an x that is not below p', () => {
      const negated = noble.scalarNegate(noble.scalarAdd(scalar(1), scalar(2)));
      expect(backend.matchSumX(t, addends, [xOf(negated)], 2)).toBe(0);
      expect(backend.matchSumX(t, addends, [Uint8Array.from([0x51, 0x20, ...P_BYTES])], 2)).toBe(-1);
    });

    it('handles t = addend (doubling) and t = -addend (infinity)', () => {
      const negT = backend.negate(t);
      expect(backend.matchSumX(t, [t], [sum(1, 1)], 2)).toBe(0);
      expect(backend.matchSumX(t, [negT, addends[0]], [sum(1, 2), xOf(scalar(1))], 2)).toBe(1 * 2 + 0);
    });
  });
});

describe('negate', () => {
  const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
  const noble = loadSecp256k1Backend('noble');

  it.each(['native', 'wasm'] as const)('gives the point the reference gives on the %s backend', (name) => {
    const backend = loadSecp256k1Backend(name);
    for (let i = 1; i <= 16; i++) {
      const s = Uint8Array.from(require('node:crypto').createHash('sha256').update(`n${i}`).digest());
      const negated = backend.negate(backend.baseMul(s));
      expect(backend.toCompressed(negated)).toEqual(noble.toCompressed(noble.negate(noble.baseMul(s))));
      expect(backend.equals(backend.negate(negated), backend.baseMul(s))).toBe(true);
    }
  });
});

describe('sumsAndDiffs', () => {
  const { loadSecp256k1Backend } = require('../src/backend') as typeof import('../src/backend');
  const noble = loadSecp256k1Backend('noble');
  const scalar = (i: number): Uint8Array => Uint8Array.from(require('node:crypto').createHash('sha256').update(`d${i}`).digest());
  const enc = (backend: ReturnType<typeof loadSecp256k1Backend>, p: unknown): string | null =>
    p === null ? null : Buffer.from(backend.toCompressed(p)).toString('hex');

  it.each(['native', 'wasm'] as const)('gives q + a and q − a as the reference does on the %s backend, q = ±a included', (name) => {
    const backend = loadSecp256k1Backend(name);
    const a = scalar(0);
    const qs = [scalar(1), scalar(2), a, noble.scalarNegate(a), scalar(3)];
    const expected = noble.sumsAndDiffs(noble.baseMul(a), qs.map((q) => noble.baseMul(q))).map((p) => enc(noble, p));
    const actual = backend.sumsAndDiffs(backend.baseMul(a), qs.map((q) => backend.baseMul(q))).map((p) => enc(backend, p));
    expect(actual).toEqual(expected);
    expect(expected[5]).toBeNull(); // a − a
    expect(expected[6]).toBeNull(); // −a + a
    expect(expected[0]).toBe(enc(noble, noble.baseMul(noble.scalarAdd(scalar(1), a))));
    expect(expected[1]).toBe(enc(noble, noble.baseMul(noble.scalarAdd(scalar(1), noble.scalarNegate(a)))));
    expect(backend.sumsAndDiffs(backend.baseMul(a), [])).toEqual([]);
  });
});
