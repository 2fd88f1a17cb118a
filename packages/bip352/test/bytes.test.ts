import { compactSize, readCompactSize, u32le, u64le } from '../src';

describe("Bitcoin's serialization primitives", () => {
  it.each([
    [0, '00'],
    [0xfc, 'fc'],
    [0xfd, 'fdfd00'],
    [0xffff, 'fdffff'],
    [0x10000, 'fe00000100'],
    [0xffffffff, 'feffffffff'],
  ])('CompactSize %i is %s and reads back', (n, hex) => {
    const bytes = compactSize(n);
    expect(Buffer.from(bytes).toString('hex')).toBe(hex);
    expect(readCompactSize(Uint8Array.of(0xaa, ...bytes, 0xbb), 1)).toEqual([n, 1 + bytes.length]);
  });

  it("reads the 8-byte form, and throws (its own error, or the caller's) when the bytes end first or the value is too large", () => {
    expect(readCompactSize(Buffer.from('ff0000000001000000', 'hex'), 0)).toEqual([2 ** 32, 9]);
    expect(() => readCompactSize(new Uint8Array(0), 0)).toThrow(new RangeError('CompactSize truncated'));
    expect(() => readCompactSize(Buffer.from('fd01', 'hex'), 0)).toThrow('CompactSize truncated');
    expect(() => readCompactSize(Buffer.from('fe010000', 'hex'), 0)).toThrow('CompactSize truncated');
    expect(() => readCompactSize(Buffer.from('ffffffffffffffffff', 'hex'), 0)).toThrow(new RangeError('CompactSize too large'));
    expect(() => readCompactSize(Buffer.from('fd01', 'hex'), 0, (reason) => new TypeError(`size ${reason}`))).toThrow(
      new TypeError('size truncated'),
    );
  });

  it('writes 32- and 64-bit little-endian integers', () => {
    expect(Buffer.from(u32le(0xfffffffd)).toString('hex')).toBe('fdffffff');
    expect(Buffer.from(u32le(2)).toString('hex')).toBe('02000000');
    expect(Buffer.from(u64le(5_000_000_000n)).toString('hex')).toBe('00f2052a01000000');
  });
});
