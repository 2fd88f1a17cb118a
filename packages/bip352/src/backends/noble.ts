import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToBigInt, bigIntTo32 } from '../bytes';
import type { Secp256k1Backend } from '../backend';
import { bigintScalars } from './scalar';

const Point = secp256k1.Point;
type NoblePoint = InstanceType<typeof Point>;
const P = Point.Fp.ORDER;

/**
 * The reference backend: @noble/curves in pure JavaScript. Points stay projective; equality and
 * x comparisons use cross-multiplication (X == x·Z) instead of an inversion or an encoding.
 */
export function createNobleBackend(): Secp256k1Backend<NoblePoint> {
  return {
    name: 'noble',
    pointFromCompressed(bytes) {
      try {
        return Point.fromBytes(bytes);
      } catch {
        return null;
      }
    },
    liftX(x) {
      try {
        return schnorr.utils.lift_x(bytesToBigInt(x));
      } catch {
        return null;
      }
    },
    add(a, b) {
      const r = a.add(b);
      return r.is0() ? null : r;
    },
    sum(points) {
      let r = Point.ZERO;
      for (const p of points) r = r.add(p);
      return r.is0() ? null : r;
    },
    sumCompressed(keys) {
      const points = keys.map((k) => this.pointFromCompressed(k)).filter((p): p is NoblePoint => p !== null);
      return points.length === 0 ? null : this.sum(points);
    },
    negate: (a) => a.negate(),
    mul: (p, s) => p.multiply(bytesToBigInt(s)),
    addTweak(p, t) {
      const r = p.add(Point.BASE.multiply(bytesToBigInt(t)));
      return r.is0() ? null : r;
    },
    baseMul: (s) => Point.BASE.multiply(bytesToBigInt(s)),
    toCompressed: (p) => p.toBytes(true),
    toXOnly: (p) => bigIntTo32(p.x),
    // the top 48 bits of x, the same key as key48() over the 32-byte encoding
    xKey: (p) => Number(p.x >> 208n),
    xEquals(p, x, offset = 0) {
      // X / Z == x  <=>  X == x·Z (mod p): no inversion.
      const xb = bytesToBigInt(offset === 0 && x.length === 32 ? x : x.subarray(offset, offset + 32));
      return p.X === (xb * p.Z) % P;
    },
    equals: (a, b) => a.equals(b),
    ...bigintScalars,
  };
}
