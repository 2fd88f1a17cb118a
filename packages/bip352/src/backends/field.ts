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

/** x mod p in [0, p). */
export function modP(x: bigint): bigint {
  const r = x % FIELD_P;
  return r < 0n ? r + FIELD_P : r;
}

/**
 * x^-1 mod p for x ≢ 0, by Lehmer's extended Euclid (Knuth, TAOCP vol. 2, §4.5.2, Algorithm L):
 * the quotients of about 26 bits' worth of Euclid steps are found from the leading 52 bits of
 * u and v in double-precision arithmetic (exact below 2^53), then applied to the big integers
 * at once, so a 256-bit inverse costs about ten rounds of big-integer products instead of some
 * 150 big-integer divisions. Variable time: public data only (points of transactions).
 * @throws {RangeError} when x ≡ 0 (mod p).
 */
export function invertModP(x: bigint): bigint {
  let u = FIELD_P;
  let v = modP(x);
  if (v === 0n) throw new RangeError('0 has no inverse mod p');
  // invariant: x1·x ≡ u and x2·x ≡ v (mod p)
  let x1 = 0n;
  let x2 = 1n;
  while (v !== 0n) {
    if (u < 0x20000000000000n) {
      while (v !== 0n) {
        const q = u / v;
        const r = u - q * v;
        u = v;
        v = r;
        const t = x1 - q * x2;
        x1 = x2;
        x2 = t;
      }
      break;
    }
    // leading 52 bits of u, and v at the same shift (Number(u) may round up: never too few bits dropped)
    const bits = Math.floor(Math.log2(Number(u))) + 1;
    const shift = BigInt(bits > 52 ? bits - 52 : 0);
    let uh = Number(u >> shift);
    let vh = Number(v >> shift);
    let a = 1;
    let b = 0;
    let c = 0;
    let d = 1;
    // Collins' condition: the quotient is certain when both bracketing estimates agree
    while (vh + c !== 0 && vh + d !== 0) {
      const q = Math.floor((uh + a) / (vh + c));
      if (q !== Math.floor((uh + b) / (vh + d))) break;
      let t = a - q * c;
      a = c;
      c = t;
      t = b - q * d;
      b = d;
      d = t;
      t = uh - q * vh;
      uh = vh;
      vh = t;
    }
    if (b === 0) {
      // no certain quotient from the leading digits: one full-precision step
      const q = u / v;
      const r = u - q * v;
      u = v;
      v = r;
      const t = x1 - q * x2;
      x1 = x2;
      x2 = t;
    } else {
      const ba = BigInt(a);
      const bb = BigInt(b);
      const bc = BigInt(c);
      const bd = BigInt(d);
      const nu = ba * u + bb * v;
      v = bc * u + bd * v;
      u = nu;
      const nx = ba * x1 + bb * x2;
      x2 = bc * x1 + bd * x2;
      x1 = nx;
    }
  }
  return modP(x1); // u = gcd(p, x) = 1
}

/** 32 big-endian bytes of x (0 ≤ x < 2^256) into `out` at `offset`. */
export function writeUint256(x: bigint, out: Uint8Array, offset: number): void {
  const view = new DataView(out.buffer, out.byteOffset + offset, 32);
  view.setBigUint64(0, x >> 192n);
  view.setBigUint64(8, BigInt.asUintN(64, x >> 128n));
  view.setBigUint64(16, BigInt.asUintN(64, x >> 64n));
  view.setBigUint64(24, BigInt.asUintN(64, x));
}
