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

/**
 * The txid and taproot outputs of the packed transaction at `offset` of `jobs`, its inputs
 * skipped unread (for readers that need only the outputs: a tweak index); scripts are views into
 * `jobs`. Returns them and where the next transaction starts.
 * @throws {TypeError} when the bytes from `offset` are not a whole packed transaction.
 */
export function readPackedOutputs(
  jobs: Uint8Array,
  offset: number,
): { txid: string; outputs: ScanOutput[]; values: number[]; next: number } {
  const view = new DataView(jobs.buffer, jobs.byteOffset, jobs.byteLength);
  let p = offset;
  const skip = (n: number) => {
    if (p + n > jobs.length) throw malformed();
    p += n;
  };
  const u32 = () => {
    skip(4);
    return view.getUint32(p - 4, true);
  };
  skip(32);
  const txid = Buffer.from(jobs.buffer, jobs.byteOffset + offset, 32).toString('hex');
  const nIn = u32();
  const nOut = u32();
  for (let i = 0; i < nIn; i++) {
    skip(36); // txid, vout
    skip(u32()); // scriptSig
    for (let items = u32(); items > 0; items--) skip(u32());
    skip(u32()); // prevout script
  }
  const outputs: ScanOutput[] = [];
  const values: number[] = [];
  for (let i = 0; i < nOut; i++) {
    const index = u32();
    skip(8 + 34);
    values.push(view.getFloat64(p - 42, true));
    outputs.push({ index, script: jobs.subarray(p - 34, p) });
  }
  return { txid, outputs, values, next: p };
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
 * Writes packed transactions into one growing buffer: the JavaScript writer of the format (the
 * native one is native/rpc-block.c), behind {@link packTransactions} and the silent-payment
 * service's reader of block answers that the native reader leaves (JSON.parse, then the hex
 * fields written here as Buffer's native decoder reads them). The `hex…` methods return false,
 * writing nothing useful, when the text is not hex of the right size: the caller then
 * {@link rewind}s to where the transaction started.
 */
export class PackedWriter {
  #out: Buffer;
  #at = 0;

  constructor(initialBytes = 1 << 16) {
    this.#out = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Bytes written so far (where the next transaction starts). */
  get length(): number {
    return this.#at;
  }

  /** Forgets everything written from `at` on (a transaction that could not be packed). */
  rewind(at: number): void {
    this.#at = Math.min(at, this.#at);
  }

  #room(n: number): void {
    if (this.#at + n <= this.#out.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.#out.length * 2, this.#at + n));
    this.#out.copy(bigger, 0, 0, this.#at);
    this.#out = bigger;
  }

  u32(n: number): void {
    this.#room(4);
    this.#out.writeUInt32LE(n, this.#at);
    this.#at += 4;
  }

  f64(value: number): void {
    this.#room(8);
    this.#out.writeDoubleLE(value, this.#at);
    this.#at += 8;
  }

  /** `bytes` hex characters' worth of bytes, no length before them (a txid, an output script). */
  hexFixed(hex: unknown, bytes: number): boolean {
    if (typeof hex !== 'string' || hex.length !== bytes * 2) return false;
    this.#room(bytes);
    if (this.#out.write(hex, this.#at, bytes, 'hex') !== bytes) return false;
    this.#at += bytes;
    return true;
  }

  /** A byte string given as hex: its length, then its bytes. */
  hexString(hex: unknown): boolean {
    if (typeof hex !== 'string' || hex.length % 2 !== 0) return false;
    const n = hex.length / 2;
    this.#room(4 + n);
    this.#out.writeUInt32LE(n, this.#at);
    if (n > 0 && this.#out.write(hex, this.#at + 4, n, 'hex') !== n) return false;
    this.#at += 4 + n;
    return true;
  }

  /** A byte string: its length, then its bytes. */
  bytes(b: Uint8Array): void {
    this.#room(4 + b.length);
    this.#out.writeUInt32LE(b.length, this.#at);
    this.#out.set(b, this.#at + 4);
    this.#at += 4 + b.length;
  }

  /** `bytes` bytes, no length before them. */
  raw(b: Uint8Array): void {
    this.#room(b.length);
    this.#out.set(b, this.#at);
    this.#at += b.length;
  }

  /**
   * One transaction from its scan inputs as objects (packTransactions' unit). Output scripts
   * must be 34 bytes (the format's).
   * @throws {TypeError} on a txid that is not 64 hex characters or an output script of another
   *   size; what was written of the transaction stays, for the caller to {@link rewind}.
   */
  transaction(tx: PackedTransaction): void {
    this.#txid(tx.txid, 'txid');
    this.u32(tx.inputs.length);
    this.u32(tx.outputs.length);
    for (const input of tx.inputs) {
      this.#txid(input.txid, 'input txid');
      this.u32(input.vout);
      this.bytes(input.scriptSig);
      this.u32(input.witness.length);
      for (const item of input.witness) this.bytes(item);
      this.bytes(input.prevoutScript);
    }
    tx.outputs.forEach((output, i) => {
      if (output.script.length !== 34) throw new TypeError('outputs: packed scripts are 34 bytes');
      this.u32(output.index);
      this.f64(tx.values[i] ?? 0);
      this.raw(output.script);
    });
  }

  // hexFixed refuses anything but 64 characters that all decode (Buffer stops at the first that does not)
  #txid(hex: string, what: string): void {
    if (!this.hexFixed(hex, 32)) throw new TypeError(`${what} expected 64 hex characters`);
  }

  /** What was written, in a buffer of its own (transferable); the writer starts again empty. */
  take(): Uint8Array {
    const packed = new Uint8Array(new ArrayBuffer(this.#at));
    packed.set(this.#out.subarray(0, this.#at));
    this.#at = 0;
    return packed;
  }
}

/**
 * Packs transactions (the inverse of {@link readPackedTransactions}): for callers that have the
 * scan inputs as objects, and for the tests. Output scripts must be 34 bytes (the format's).
 * @throws {TypeError} on a txid that is not 64 hex characters or an output script of another size.
 */
export function packTransactions(txs: readonly PackedTransaction[]): Uint8Array {
  const w = new PackedWriter();
  for (const tx of txs) w.transaction(tx);
  return w.take();
}
