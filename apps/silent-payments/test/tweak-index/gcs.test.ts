import { randomBytes } from 'node:crypto';
import { buildGcsFilter, siphash24 } from '../../src/tweak-index/gcs';
import { gcsMatches } from './support/gcs-reader';

// SipHash-2-4 and the Golomb-coded sets of BIP-158 (src/tweak-index/gcs.ts); the filters are also
// compared with Bitcoin Core's own in test/real-node/tweak-index/indexer.test.ts.
describe('siphash24', () => {
  it("gives the reference implementation's 64-bit outputs (key 00…0f, message 00, 01, … of each length)", () => {
    const key = Uint8Array.from({ length: 16 }, (_, i) => i);
    const message = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => i);
    expect([0, 1, 7, 8, 15].map((n) => siphash24(key, message(n)).toString(16).padStart(16, '0'))).toEqual([
      '726fdb47dd0e0e31',
      '74f839c593dc67fd',
      'ab0200f58b01d137',
      '93f5f5799a932462',
      'a129ca6149be45e5',
    ]);
  });
});

describe('buildGcsFilter', () => {
  it('holds every item it was built from and, at P = 19, almost nothing else', () => {
    const key = Uint8Array.from(randomBytes(16));
    const items = Array.from({ length: 500 }, () => Uint8Array.from(randomBytes(32)));
    const filter = buildGcsFilter(key, items);
    for (const item of items) expect(gcsMatches(filter, key, item)).toBe(true);
    const strangers = Array.from({ length: 500 }, () => Uint8Array.from(randomBytes(32)));
    expect(strangers.filter((s) => gcsMatches(filter, key, s)).length).toBeLessThanOrEqual(2);
  });

  it('is N = 0 and nothing else for no items', () => {
    expect(Buffer.from(buildGcsFilter(new Uint8Array(16), [])).toString('hex')).toBe('00');
  });
});
