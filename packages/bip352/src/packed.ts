import type { ScanInput, ScanOutput } from './inputs';

/**
 * Packed transactions: the scan inputs of transactions one after the other in one buffer, the
 * form packBlockAnswer gives a block's transactions (native/rpc-block.c), little-endian:
 *   txid (32) · inputs (u32) · outputs (u32)
 *   per input: txid (32) · vout (u32) · scriptSig · witness items (u32 count, then each) · prevout scriptPubKey
 *   per output: n (u32) · value in BTC (f64) · scriptPubKey (34)
 * each byte string as its length (u32) then its bytes; txids in the order Core prints them (the
 * hex decoded as written). packBlockAnswer packs only the taproot outputs, the only ones a
 * silent payment can be.
 */
export interface PackedTransaction {
  /** the transaction's txid, hex as displayed. */
  txid: string;
  inputs: ScanInput[];
  /** its outputs as packed (scripts of 34 bytes). */
  outputs: ScanOutput[];
  /** the value (BTC) of each output, in the order of `outputs`. */
  values: number[];
}

/** A packed buffer that is not whole packed transactions. */
function malformed(): TypeError {
  return new TypeError('jobs: not whole packed transactions');
}

/**
 * Reads the packed transaction at `offset` of `jobs`; returns it and where the next one starts.
 * Byte strings are views into `jobs` (not copies).
 * @throws {TypeError} when the bytes from `offset` are not a whole packed transaction.
 */
export function readPackedTransaction(jobs: Uint8Array, offset: number): { tx: PackedTransaction; next: number } {
  const view = new DataView(jobs.buffer, jobs.byteOffset, jobs.byteLength);
  let p = offset;
  const need = (n: number) => {
    if (p + n > jobs.length) throw malformed();
  };
  const u32 = () => {
    need(4);
    p += 4;
    return view.getUint32(p - 4, true);
  };
  const hex32 = () => {
    need(32);
    p += 32;
    return Buffer.from(jobs.buffer, jobs.byteOffset + p - 32, 32).toString('hex');
  };
  const bytes = () => {
    const n = u32();
    need(n);
    p += n;
    return jobs.subarray(p - n, p);
  };
  const txid = hex32();
  const nIn = u32();
  const nOut = u32();
  const inputs: ScanInput[] = [];
  for (let i = 0; i < nIn; i++) {
    const prev = hex32();
    const vout = u32();
    const scriptSig = bytes();
    const witness: Uint8Array[] = [];
    for (let j = u32(); j > 0; j--) witness.push(bytes());
    inputs.push({ txid: prev, vout, scriptSig, witness, prevoutScript: bytes() });
  }
  const outputs: ScanOutput[] = [];
  const values: number[] = [];
  for (let i = 0; i < nOut; i++) {
    const index = u32();
    need(8 + 34);
    values.push(view.getFloat64(p, true));
    outputs.push({ index, script: jobs.subarray(p + 8, p + 42) });
    p += 42;
  }
  return { tx: { txid, inputs, outputs, values }, next: p };
}

/** Every packed transaction of `jobs`, in order. @throws {TypeError} as {@link readPackedTransaction}. */
export function readPackedTransactions(jobs: Uint8Array): PackedTransaction[] {
  const txs: PackedTransaction[] = [];
  for (let at = 0; at < jobs.length;) {
    const { tx, next } = readPackedTransaction(jobs, at);
    txs.push(tx);
    at = next;
  }
  return txs;
}

/**
 * Packs transactions (the inverse of {@link readPackedTransactions}): for callers that have the
 * scan inputs as objects, and for the tests. Output scripts must be 34 bytes (the format's).
 * @throws {TypeError} on a txid that is not 64 hex characters or an output script of another size.
 */
export function packTransactions(txs: readonly PackedTransaction[]): Uint8Array {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(n);
    parts.push(b);
  };
  const hex32 = (hex: string, what: string) => {
    if (typeof hex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError(`${what} expected 64 hex characters`);
    parts.push(Buffer.from(hex, 'hex'));
  };
  const bytes = (b: Uint8Array) => {
    u32(b.length);
    parts.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  };
  for (const tx of txs) {
    hex32(tx.txid, 'txid');
    u32(tx.inputs.length);
    u32(tx.outputs.length);
    for (const input of tx.inputs) {
      hex32(input.txid, 'input txid');
      u32(input.vout);
      bytes(input.scriptSig);
      u32(input.witness.length);
      for (const item of input.witness) bytes(item);
      bytes(input.prevoutScript);
    }
    tx.outputs.forEach((output, i) => {
      if (output.script.length !== 34) throw new TypeError('outputs: packed scripts are 34 bytes');
      u32(output.index);
      const value = Buffer.allocUnsafe(8);
      value.writeDoubleLE(tx.values[i] ?? 0);
      parts.push(value, Buffer.from(output.script.buffer, output.script.byteOffset, 34));
    });
  }
  return new Uint8Array(Buffer.concat(parts)); // its own ArrayBuffer (transferable)
}
