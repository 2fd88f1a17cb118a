import type { IndexedTx, SpentOutpoint } from './block-record';
import type { StoredSpent, StoredTx } from './store';

/**
 * A block's part of the index as the stores keep it: one packed value for its transactions and
 * one for its spends, rather than a row for each transaction, output and spend (a dense block's
 * thousands of rows cost the block pass more than the rest of the index's work; see
 * docs/performance/silent-payments.md, "The catch-up with the index on").
 *
 * Transactions, in block order: txid (32 bytes, display order) · tweak (33) · outputs (u16 LE) ·
 * per output, in vout order: vout (u32 LE) · value in satoshis (u64 LE) · x-only key (32).
 * Spends, in block order: txid (32, display order) · vout (u32 LE) · spending txid (32) · height
 * of the block that created the output (u32 LE).
 */
const TX_HEAD = 32 + 33 + 2;
const OUTPUT = 4 + 8 + 32;
const SPEND = 32 + 4 + 32 + 4;

/** The transactions of a block, packed. @throws {TypeError} for a field that is not what it should be (nothing is written). */
export function packTxs(txs: readonly IndexedTx[]): Buffer {
  let size = 0;
  for (const tx of txs) size += TX_HEAD + OUTPUT * tx.outputs.length;
  const out = Buffer.alloc(size);
  let at = 0;
  for (const tx of txs) {
    at = putHex(out, at, tx.txid, 32, 'txid');
    at = putBytes(out, at, tx.tweak, 33, 'tweak');
    at = out.writeUInt16LE(tx.outputs.length, at);
    for (const o of tx.outputs) {
      at = out.writeUInt32LE(o.vout, at);
      at = out.writeBigUInt64LE(o.value, at);
      at = putBytes(out, at, o.xonly, 32, 'x-only key');
    }
  }
  return out;
}

/**
 * The transactions of the block at `height` from their packed value; `spentAt` gives the height
 * of the block that spent an output (null: unspent).
 */
export function unpackTxs(height: number, packed: Uint8Array, spentAt: (txid: string, vout: number) => number | null): StoredTx[] {
  const b = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const txs: StoredTx[] = [];
  for (let at = 0; at < b.length;) {
    const txid = b.toString('hex', at, at + 32);
    const tweak = new Uint8Array(b.subarray(at + 32, at + 65));
    const count = b.readUInt16LE(at + 65);
    at += TX_HEAD;
    const outputs: StoredTx['outputs'] = [];
    for (let i = 0; i < count; i += 1, at += OUTPUT) {
      const vout = b.readUInt32LE(at);
      outputs.push({
        vout,
        value: b.readBigUInt64LE(at + 4),
        xonly: new Uint8Array(b.subarray(at + 12, at + 44)),
        spentHeight: spentAt(txid, vout),
      });
    }
    txs.push({ height, txid, tweak, outputs });
  }
  return txs;
}

/** The spends of a block, packed. @throws {TypeError} for a field that is not what it should be. */
export function packSpent(spent: readonly SpentOutpoint[]): Buffer {
  const out = Buffer.alloc(SPEND * spent.length);
  let at = 0;
  for (const s of spent) {
    at = putHex(out, at, s.txid, 32, 'spent txid');
    at = out.writeUInt32LE(s.vout, at);
    at = putHex(out, at, s.spender, 32, 'spender');
    at = out.writeUInt32LE(s.outHeight, at);
  }
  return out;
}

/** The spends of the block at `height` from their packed value. */
export function unpackSpent(height: number, packed: Uint8Array): StoredSpent[] {
  const b = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const spent: StoredSpent[] = [];
  for (let at = 0; at < b.length; at += SPEND) {
    spent.push({
      height,
      txid: b.toString('hex', at, at + 32),
      vout: b.readUInt32LE(at + 32),
      spender: b.toString('hex', at + 36, at + 68),
      outHeight: b.readUInt32LE(at + 68),
    });
  }
  return spent;
}

/** The spend of `txid:vout` among the packed spends of the block at `height` (undefined: not there). */
export function spendIn(height: number, packed: Uint8Array, txid: string, vout: number): { height: number; spender: string } | undefined {
  const found = unpackSpent(height, packed).find((s) => s.txid === txid && s.vout === vout);
  return found && { height, spender: found.spender };
}

/**
 * The transactions of packed blocks, each output with its spent height from `spends` (the spends
 * of outputs created in those blocks: the outpoint and the spending block's height).
 */
export function unpackBlocks(
  blocks: ReadonlyArray<{ height: number; txs: Uint8Array }>,
  spends: ReadonlyArray<{ txid: Uint8Array; vout: number; height: number }>,
): StoredTx[] {
  const spentAt = new Map<string, number>();
  for (const s of spends)
    spentAt.set(`${Buffer.from(s.txid.buffer, s.txid.byteOffset, s.txid.byteLength).toString('hex')}:${s.vout}`, s.height);
  const at = (txid: string, vout: number): number | null => (spentAt.size === 0 ? null : (spentAt.get(`${txid}:${vout}`) ?? null));
  return blocks.flatMap((b) => unpackTxs(b.height, b.txs, at));
}

function putHex(out: Buffer, at: number, hex: unknown, length: number, name: string): number {
  if (typeof hex !== 'string' || hex.length !== 2 * length || out.write(hex, at, 'hex') !== length) {
    throw new TypeError(`${name}: expected ${length} bytes of hex`);
  }
  return at + length;
}

function putBytes(out: Buffer, at: number, bytes: unknown, length: number, name: string): number {
  if (!(bytes instanceof Uint8Array) || bytes.length !== length) throw new TypeError(`${name}: expected ${length} bytes`);
  out.set(bytes, at);
  return at + length;
}
