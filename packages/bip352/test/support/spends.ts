import { randomBytes } from 'node:crypto';
import { loadSecp256k1Backend, type SendInput } from '../../src';
import { hash160 } from '../../src/hash';

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

export const cat = (...parts: (Uint8Array | number[])[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));
const SIG = new Uint8Array(71).fill(0x30);

/** The output types an input can spend, as the scanner's tests build them. */
export type Kind = 'p2tr' | 'p2tr-script' | 'p2wpkh' | 'p2sh-p2wpkh' | 'p2pkh' | 'p2pkh-malleated';

/** A spend of an output of the given type with key d (a random one by default), shaped as on chain. */
export function spend(kind: Kind, d = key()): SendInput {
  const base = { txid: hex(key()), vout: 0, privateKey: d };
  const compressed = pub(d);
  switch (kind) {
    case 'p2tr':
      return { ...base, scriptSig: new Uint8Array(0), witness: [new Uint8Array(64)], prevoutScript: p2tr(xonly(d)) };
    case 'p2tr-script': {
      const control = cat([0xc0], xonly(key()));
      return {
        ...base,
        scriptSig: new Uint8Array(0),
        witness: [new Uint8Array(64), Uint8Array.of(0x51), control],
        prevoutScript: p2tr(xonly(d)),
      };
    }
    case 'p2wpkh':
      return { ...base, scriptSig: new Uint8Array(0), witness: [SIG, compressed], prevoutScript: cat([0x00, 0x14], hash160(compressed)) };
    case 'p2sh-p2wpkh': {
      const redeem = cat([0x00, 0x14], hash160(compressed));
      return {
        ...base,
        scriptSig: cat([0x16], redeem),
        witness: [SIG, compressed],
        prevoutScript: cat([0xa9, 0x14], hash160(redeem), [0x87]),
      };
    }
    case 'p2pkh':
      return {
        ...base,
        scriptSig: cat([SIG.length], SIG, [33], compressed),
        witness: [],
        prevoutScript: cat([0x76, 0xa9, 0x14], hash160(compressed), [0x88, 0xac]),
      };
    case 'p2pkh-malleated':
      // <dummy> OP_DROP <sig> <key>
      return {
        ...base,
        scriptSig: cat([1, 0x42, 0x75, SIG.length], SIG, [33], compressed),
        witness: [],
        prevoutScript: cat([0x76, 0xa9, 0x14], hash160(compressed), [0x88, 0xac]),
      };
  }
}
