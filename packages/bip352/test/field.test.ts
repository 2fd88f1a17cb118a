import { randomBytes } from 'node:crypto';
import { FIELD_P, invertModP, modP, readUint256, writeUint256 } from '../src/backends/field';

/** Fermat: x^(p-2) mod p, the reference inverse. */
function fermat(x: bigint): bigint {
  let result = 1n;
  let base = modP(x);
  for (let e = FIELD_P - 2n; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * base) % FIELD_P;
    base = (base * base) % FIELD_P;
  }
  return result;
}

describe('invertModP', () => {
  it('gives the inverse of random elements, of edge values and of values of every size', () => {
    const values = [1n, 2n, 3n, FIELD_P - 1n, FIELD_P - 2n, FIELD_P + 5n, -7n, 2n ** 255n, 2n ** 52n - 1n, 2n ** 53n + 1n, 0x1000003d1n];
    for (let i = 0; i < 200; i++) values.push(BigInt('0x' + randomBytes(1 + (i % 32)).toString('hex')) + 1n);
    for (const x of values) {
      const inverse = invertModP(x);
      expect(inverse).toBe(fermat(x));
      expect((inverse * modP(x)) % FIELD_P).toBe(1n);
    }
  });

  it('refuses 0 and p', () => {
    expect(() => invertModP(0n)).toThrow(RangeError);
    expect(() => invertModP(FIELD_P)).toThrow(RangeError);
  });
});

describe('readUint256 / writeUint256', () => {
  it('round-trips 32 big-endian bytes at an offset', () => {
    for (let i = 0; i < 20; i++) {
      const bytes = new Uint8Array(randomBytes(40));
      const x = readUint256(bytes, 3);
      expect(x).toBe(BigInt('0x' + Buffer.from(bytes.subarray(3, 35)).toString('hex')));
      const out = new Uint8Array(40);
      writeUint256(x, out, 5);
      expect(out.subarray(5, 37)).toEqual(bytes.subarray(3, 35));
    }
  });
});
