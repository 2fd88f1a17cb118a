import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';

const Point = secp256k1.Point;
const N = Point.Fn.ORDER;

function taggedHash(tag: string, ...parts: Uint8Array[]): Buffer {
  const t = createHash('sha256').update(tag).digest();
  const h = createHash('sha256').update(t).update(t);
  for (const p of parts) h.update(p);
  return h.digest();
}

function ser32(k: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(k, 0);
  return b;
}

/**
 * A light wallet's side of BIP-352 "Scanning" from a served tweak (input_hash·A) alone, written
 * from the BIP for the tests: the ECDH point b_scan·tweak, then P_k = B_spend + t_k·G for
 * k = 0, 1, … while x(P_k) is among the candidate outputs. Gives the x-only keys found.
 */
export function scanWithTweak(
  scanPriv: Uint8Array,
  spendPub: Uint8Array,
  tweak: Uint8Array,
  isOutput: (xonly: string) => boolean,
): string[] {
  const shared = Point.fromBytes(tweak)
    .multiply(BigInt(`0x${Buffer.from(scanPriv).toString('hex')}`))
    .toBytes(true);
  const spend = Point.fromBytes(spendPub);
  const found: string[] = [];
  for (let k = 0; ; k += 1) {
    const t = BigInt(`0x${taggedHash('BIP0352/SharedSecret', shared, ser32(k)).toString('hex')}`) % N;
    const xonly = Buffer.from(spend.add(Point.BASE.multiply(t)).toBytes(true).subarray(1)).toString('hex');
    if (!isOutput(xonly)) return found;
    found.push(xonly);
  }
}
