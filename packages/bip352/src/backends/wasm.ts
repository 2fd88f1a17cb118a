import { equalBytes, key48 } from '../bytes';
import type { Secp256k1Backend } from '../backend';
import { bigintScalars } from './scalar';

interface TinySecp256k1 {
  isPoint(p: Uint8Array): boolean;
  pointAdd(a: Uint8Array, b: Uint8Array, compressed?: boolean): Uint8Array | null;
  pointAddScalar(p: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array | null;
  pointCompress(p: Uint8Array, compressed?: boolean): Uint8Array;
  pointFromScalar(d: Uint8Array, compressed?: boolean): Uint8Array | null;
  pointMultiply(p: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array | null;
}

/**
 * libsecp256k1 compiled to WebAssembly (`tiny-secp256k1` 2.x). Points are 65-byte uncompressed
 * SEC1 arrays, as in the native backend.
 */
export function createWasmBackend(): Secp256k1Backend<Uint8Array> {
  const t = require('tiny-secp256k1') as TinySecp256k1;
  const PREFIX_EVEN = new Uint8Array(33);
  PREFIX_EVEN[0] = 0x02;
  const parse = (bytes: Uint8Array): Uint8Array | null => {
    try {
      return t.isPoint(bytes) ? t.pointCompress(bytes, false) : null;
    } catch {
      return null;
    }
  };
  const negate = (p: Uint8Array): Uint8Array => {
    const c = t.pointCompress(p, true);
    c[0] = (c[0] as number) ^ 1;
    return t.pointCompress(c, false);
  };
  return {
    name: 'wasm',
    pointFromCompressed: parse,
    liftX(x) {
      PREFIX_EVEN.set(x, 1);
      return parse(PREFIX_EVEN);
    },
    add: (a, b) => t.pointAdd(a, b, false),
    sum: sumPoints,
    sumCompressed(keys) {
      const points = keys.map((k) => this.pointFromCompressed(k)).filter((p): p is Uint8Array => p !== null);
      return points.length === 0 ? null : this.sum(points);
    },
    negate,
    mul(p, scalar) {
      const r = t.pointMultiply(p, scalar, false);
      if (r === null) throw new RangeError('scalar multiplication gave the point at infinity');
      return r;
    },
    addTweak: (p, tweak) => t.pointAddScalar(p, tweak, false),
    baseMul(scalar) {
      const r = t.pointFromScalar(scalar, false);
      if (r === null) throw new RangeError('invalid scalar');
      return r;
    },
    toCompressed: (p) => t.pointCompress(p, true),
    toXOnly: (p) => p.slice(1, 33),
    xKey: (p) => key48(p, 1),
    xEquals: (p, x, offset = 0) => equalBytes(p.subarray(1, 33), x, offset, 32),
    equals: (a, b) => equalBytes(a, b),
    ...bigintScalars,
  };

  /** Adds points one at a time; null stands for infinity, so an intermediate sum at infinity is fine. */
  function sumPoints(points: Uint8Array[]): Uint8Array | null {
    let acc: Uint8Array | null = null;
    for (const p of points) {
      if (acc === null) acc = p;
      else acc = t.pointAdd(acc, p, false) ?? null;
    }
    return acc;
  }
}
