import { SilentPaymentError } from '../src/errors';
import { BACKEND_NAMES, isBackendName } from '../src';

describe('loadSecp256k1Backend', () => {
  afterEach(() => {
    jest.resetModules();
    jest.dontMock('secp256k1/bindings');
  });

  it('loads the three backends', () => {
    const { loadSecp256k1Backend } = require('../src/load-backend') as typeof import('../src/load-backend');
    expect(['native', 'wasm', 'noble'].map((n) => loadSecp256k1Backend(n as 'native').name)).toEqual(['native', 'wasm', 'noble']);
  });

  it('refuses with a clear error, never a fallback, when the native addon is missing', () => {
    jest.resetModules();
    jest.doMock('secp256k1/bindings', () => {
      throw new Error("Cannot find module 'secp256k1/bindings'");
    });
    const { loadSecp256k1Backend } = require('../src/load-backend') as typeof import('../src/load-backend');
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
    const { loadSecp256k1Backend } = require('../src/load-backend') as typeof import('../src/load-backend');
    expect(() => loadSecp256k1Backend('native')).toThrow(/backend 'native' cannot be loaded \(Cannot find module .*bip352_scan\.node/);
    expect(() => loadSecp256k1Backend('native')).toThrow(/npm run build/);
    jest.dontMock(SCAN_ADDON_PATH);
  });

  it('rejects an unknown backend name', () => {
    const { loadSecp256k1Backend } = require('../src/load-backend') as typeof import('../src/load-backend');
    expect(() => loadSecp256k1Backend('gmp' as never)).toThrow(RangeError);
    expect(SilentPaymentError).toBeDefined();
  });
});

describe('isBackendName', () => {
  it('accepts exactly the names loadSecp256k1Backend loads', () => {
    expect([...BACKEND_NAMES]).toEqual(['native', 'wasm', 'noble']);
    for (const name of BACKEND_NAMES) expect(isBackendName(name)).toBe(true);
    for (const name of ['', 'Native', 'elliptic', 'native ']) expect(isBackendName(name)).toBe(false);
  });
});

describe('negate', () => {
  const { loadSecp256k1Backend } = require('../src/load-backend') as typeof import('../src/load-backend');
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
