import { randomBytes } from 'node:crypto';
import { loadSecp256k1Backend, type SendInput } from '../../src';

// Random keys and the inputs that spend them, for the scanner's tests (native-scanner, scan-many).
const noble = loadSecp256k1Backend('noble');

export const key = (): Uint8Array => new Uint8Array(randomBytes(32));
export const pub = (d: Uint8Array): Uint8Array => noble.toCompressed(noble.baseMul(d));
export const xonly = (d: Uint8Array): Uint8Array => noble.toXOnly(noble.baseMul(d));
export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const p2tr = (x: Uint8Array): Uint8Array => Uint8Array.from([0x51, 0x20, ...x]);

/** A P2WPKH input spending key d (a random one by default). */
export function p2wpkhSpend(d = key()): SendInput {
  return {
    txid: hex(key()),
    vout: 1,
    privateKey: d,
    scriptSig: new Uint8Array(0),
    witness: [new Uint8Array(71), pub(d)],
    prevoutScript: Uint8Array.from([0, 0x14, ...new Uint8Array(20)]),
  };
}

/** A P2TR key-path input spending key d (a random one by default). */
export function p2trSpend(d = key()): SendInput {
  return {
    txid: hex(key()),
    vout: 0,
    privateKey: d,
    scriptSig: new Uint8Array(0),
    witness: [new Uint8Array(64)],
    prevoutScript: p2tr(xonly(d)),
  };
}
