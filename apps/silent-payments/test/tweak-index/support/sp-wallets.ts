import { createHash, randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { BlockRecord, IndexedTx } from '../../../src/tweak-index/block-record';

const Point = secp256k1.Point;
const N = Point.Fn.ORDER;
const big = (b: Uint8Array): bigint => BigInt(`0x${Buffer.from(b).toString('hex')}`);

function taggedHash(tag: string, ...parts: Uint8Array[]): Buffer {
  const t = createHash('sha256').update(tag).digest();
  const h = createHash('sha256').update(t).update(t);
  for (const p of parts) h.update(p);
  return h.digest();
}
const ser32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};

/** A wallet's keys, made here (the service never saw them), as Frigate's methods take them. */
export interface TestWallet {
  scanPriv: Uint8Array;
  spendPub: Uint8Array;
  /** [scan_private_key, spend_public_key] hex. */
  params: [string, string];
}

/** A fresh random wallet. */
export function newWallet(): TestWallet {
  const scanPriv = Uint8Array.from(randomBytes(32));
  const spendPub = Point.BASE.multiply(big(randomBytes(32)) % N).toBytes(true);
  return { scanPriv, spendPub, params: [Buffer.from(scanPriv).toString('hex'), Buffer.from(spendPub).toString('hex')] };
}

/**
 * A transaction paying `wallet` as a sender would (BIP-352 "Creating outputs", from the BIP): a
 * random tweak point T, ecdh = b_scan·T, outputs P_k = B + t_k·G for k < `count`, B the spend key
 * or its label `label`'s; one unrelated output after them.
 */
export function payingTx(wallet: TestWallet, txid: string, opts: { count?: number; label?: number } = {}): IndexedTx {
  const tweak = Point.BASE.multiply(big(randomBytes(32)) % N);
  const ecdh = tweak.multiply(big(wallet.scanPriv)).toBytes(true);
  let spend = Point.fromBytes(wallet.spendPub);
  if (opts.label !== undefined)
    spend = spend.add(Point.BASE.multiply(big(taggedHash('BIP0352/Label', wallet.scanPriv, ser32(opts.label)))));
  const outputs = Array.from({ length: opts.count ?? 1 }, (_, k) => ({
    vout: k,
    value: BigInt(1000 + k),
    xonly: spend
      .add(Point.BASE.multiply(big(taggedHash('BIP0352/SharedSecret', ecdh, ser32(k))) % N))
      .toBytes(true)
      .subarray(1),
  }));
  outputs.push({ vout: outputs.length, value: 5n, xonly: Uint8Array.from(randomBytes(32)) });
  return { txid, tweak: tweak.toBytes(true), outputs };
}

const FILLER_TWEAK = Point.BASE.multiply(7n).toBytes(true);

/** A transaction paying nobody known (a fixed tweak, a random output). */
export function otherTx(txid: string): IndexedTx {
  return { txid, tweak: FILLER_TWEAK, outputs: [{ vout: 0, value: 330n, xonly: Uint8Array.from(randomBytes(32)) }] };
}

/** A txid made of a height and a position. */
export const txidOf = (height: number, pos: number): string =>
  `${height.toString(16).padStart(8, '0')}${pos.toString(16).padStart(56, '0')}`;

/** A block record at `height` (hash `hashByte` repeated) holding `txs`. */
export function blockOf(height: number, txs: IndexedTx[], hashByte = height % 256): BlockRecord {
  return {
    height,
    hash: Buffer.alloc(32, hashByte).toString('hex'),
    header: new Uint8Array(80).fill(height % 256),
    time: 1_700_000_000 + height * 600,
    txs,
    spent: [],
    newOutputsFilter: new Uint8Array([0]),
    spentFilter: new Uint8Array([0]),
  };
}
