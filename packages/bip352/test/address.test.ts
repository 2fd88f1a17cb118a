import { bech32m } from '@scure/base';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import {
  decodeSilentPaymentAddress,
  encodeSilentPaymentAddress,
  hrpForNetwork,
  labeledSpendPub,
  labelTweak,
  SilentPaymentError,
} from '../src';
import { loadOfficialVectors } from './support/helpers';

const scanPub = secp256k1.getPublicKey(
  Uint8Array.from({ length: 32 }, (_, i) => i + 1),
  true,
);
const spendPub = secp256k1.getPublicKey(
  Uint8Array.from({ length: 32 }, (_, i) => 64 - i),
  true,
);

function raw(hrp: string, version: number, data: Uint8Array): string {
  return bech32m.encode(hrp, [version, ...bech32m.toWords(data)], 2000);
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof SilentPaymentError ? error.code : 'other';
  }
  return undefined;
}

describe('encodeSilentPaymentAddress', () => {
  it('uses sp on mainnet and tsp on testnet, signet and regtest', () => {
    expect(encodeSilentPaymentAddress(scanPub, spendPub, 'mainnet')).toMatch(/^sp1q/);
    for (const network of ['testnet', 'signet', 'regtest'] as const) {
      expect(encodeSilentPaymentAddress(scanPub, spendPub, network)).toMatch(/^tsp1q/);
    }
    expect(hrpForNetwork('signet')).toBe('tsp');
  });

  it('round-trips through decode', () => {
    const address = encodeSilentPaymentAddress(scanPub, spendPub, 'signet');
    expect(address).toHaveLength(117);
    expect(decodeSilentPaymentAddress(address)).toEqual({ scanPub, spendPub, version: 0, hrp: 'tsp' });
  });

  it('rejects keys of the wrong length or off the curve', () => {
    expect(() => encodeSilentPaymentAddress(scanPub.subarray(1), spendPub, 'mainnet')).toThrow(
      /"scanPub" expected Uint8Array of length 33/,
    );
    const bad = new Uint8Array(33).fill(0xff);
    bad[0] = 2;
    expect(() => encodeSilentPaymentAddress(scanPub, bad, 'mainnet')).toThrow(/"spendPub" is not a valid/);
    expect(() => encodeSilentPaymentAddress(scanPub, spendPub, 'bitcoin' as never)).toThrow(RangeError);
  });
});

describe('decodeSilentPaymentAddress', () => {
  it('decodes every address of the official vectors to the keys they carry', () => {
    for (const c of loadOfficialVectors()) {
      for (const s of c.sending) {
        for (const r of s.given.recipients) {
          if (typeof r === 'string') continue;
          const decoded = decodeSilentPaymentAddress(r.address);
          expect(Buffer.from(decoded.scanPub).toString('hex')).toBe(r.scan_pub_key);
          expect(Buffer.from(decoded.spendPub).toString('hex')).toBe(r.spend_pub_key);
        }
      }
    }
  });

  it('reads the first 66 bytes of versions 1 to 30 and ignores the rest', () => {
    const data = new Uint8Array(80);
    data.set(scanPub, 0);
    data.set(spendPub, 33);
    data.fill(0xab, 66);
    const decoded = decodeSilentPaymentAddress(raw('sp', 1, data));
    expect(decoded).toEqual({ scanPub, spendPub, version: 1, hrp: 'sp' });
    expect(decodeSilentPaymentAddress(raw('tsp', 30, data)).version).toBe(30);
  });

  it('rejects version 31, a version-0 payload that is not 66 bytes, and a short payload', () => {
    const data = new Uint8Array(67);
    data.set(scanPub, 0);
    data.set(spendPub, 33);
    expect(codeOf(() => decodeSilentPaymentAddress(raw('sp', 31, data.subarray(0, 66))))).toBe('INVALID_ADDRESS');
    expect(codeOf(() => decodeSilentPaymentAddress(raw('sp', 0, data)))).toBe('INVALID_ADDRESS');
    expect(codeOf(() => decodeSilentPaymentAddress(raw('sp', 1, data.subarray(0, 65))))).toBe('INVALID_ADDRESS');
  });

  it('rejects addresses over 1023 characters, other prefixes, bad checksums and mixed case', () => {
    const long = raw('sp', 1, new Uint8Array(700).fill(2));
    expect(long.length).toBeGreaterThan(1023);
    expect(codeOf(() => decodeSilentPaymentAddress(long))).toBe('INVALID_ADDRESS');
    const data = new Uint8Array(66);
    data.set(scanPub, 0);
    data.set(spendPub, 33);
    expect(codeOf(() => decodeSilentPaymentAddress(raw('bc', 0, data)))).toBe('INVALID_ADDRESS');
    const good = encodeSilentPaymentAddress(scanPub, spendPub, 'mainnet');
    const flipped = good.slice(0, -1) + (good.endsWith('q') ? 'p' : 'q');
    expect(codeOf(() => decodeSilentPaymentAddress(flipped))).toBe('INVALID_ADDRESS');
    expect(codeOf(() => decodeSilentPaymentAddress(good.slice(0, 10) + good.slice(10).toUpperCase()))).toBe('INVALID_ADDRESS');
    expect(decodeSilentPaymentAddress(good.toUpperCase()).scanPub).toEqual(scanPub);
  });
});

describe('labels', () => {
  const scanPriv = Uint8Array.from({ length: 32 }, (_, i) => i + 1);

  it('derives B_m = B_spend + hash(b_scan || m)·G', () => {
    const tweak = BigInt('0x' + Buffer.from(labelTweak(scanPriv, 7)).toString('hex'));
    const expected = secp256k1.Point.fromBytes(spendPub).add(secp256k1.Point.BASE.multiply(tweak)).toBytes(true);
    expect(labeledSpendPub(scanPriv, spendPub, 7)).toEqual(expected);
    expect(labelTweak(scanPriv, 0)).not.toEqual(labelTweak(scanPriv, 1));
  });

  it('rejects label indexes outside ser32', () => {
    expect(() => labelTweak(scanPriv, -1)).toThrow(RangeError);
    expect(() => labelTweak(scanPriv, 2 ** 32)).toThrow(RangeError);
    expect(() => labelTweak(scanPriv, 1.5)).toThrow(RangeError);
    expect(labelTweak(scanPriv, 2 ** 32 - 1)).toHaveLength(32);
  });
});
