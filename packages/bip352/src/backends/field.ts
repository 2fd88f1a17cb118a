/** secp256k1 field prime p = 2^256 - 2^32 - 977. */
export const FIELD_P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;

/** The 32 big-endian bytes of `bytes` at `offset` as a bigint (four 64-bit reads, no string). */
export function readUint256(bytes: Uint8Array, offset: number): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 32);
  return (
    (view.getBigUint64(0) << 192n) |
    (view.getBigUint64(8) << 128n) |
    (view.getBigUint64(16) << 64n) |
    view.getBigUint64(24)
  );
}

/** Affine coordinates of a 65-byte uncompressed SEC1 point. */
export interface Affine {
  x: bigint;
  y: bigint;
}

/** The affine coordinates of a 65-byte uncompressed point (04 || x || y). */
export function affineOf(point: Uint8Array): Affine {
  const view = new DataView(point.buffer, point.byteOffset, 65);
  return {
    x: (view.getBigUint64(1) << 192n) | (view.getBigUint64(9) << 128n) | (view.getBigUint64(17) << 64n) | view.getBigUint64(25),
    y: (view.getBigUint64(33) << 192n) | (view.getBigUint64(41) << 128n) | (view.getBigUint64(49) << 64n) | view.getBigUint64(57),
  };
}

/**
 * Whether x(a + b) = x for affine points a, b with a.x ≠ b.x, without computing the sum:
 * x(a + b) = λ² - x_a - x_b with λ = (y_b - y_a) / (x_b - x_a), so the test is
 * (y_b - y_a)² = (x + x_a + x_b)(x_b - x_a)² (mod p), which needs no field inversion.
 * `xSum` = x_a + x_b, `dx2` = (x_b - x_a)² and `dy2` = (y_b - y_a)² (any representatives mod
 * p: left unreduced, one reduction per test is cheaper than three), computed once per pair; x < p.
 */
export function sumHasX(xSum: bigint, dx2: bigint, dy2: bigint, x: bigint): boolean {
  return ((x + xSum) * dx2 - dy2) % FIELD_P === 0n;
}
