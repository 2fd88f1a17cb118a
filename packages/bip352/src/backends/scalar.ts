import { bigIntTo32, bytesToBigInt } from '../bytes';
import { CURVE_ORDER } from '../constants';

/** Scalar arithmetic mod n with bigint: a few microseconds, shared by the backends. */
export const bigintScalars = {
  scalarMul(a: Uint8Array, b: Uint8Array): Uint8Array {
    return bigIntTo32((bytesToBigInt(a) * bytesToBigInt(b)) % CURVE_ORDER);
  },
  scalarAdd(a: Uint8Array, b: Uint8Array): Uint8Array {
    return bigIntTo32((bytesToBigInt(a) + bytesToBigInt(b)) % CURVE_ORDER);
  },
  scalarNegate(a: Uint8Array): Uint8Array {
    return bigIntTo32((CURVE_ORDER - (bytesToBigInt(a) % CURVE_ORDER)) % CURVE_ORDER);
  },
};
