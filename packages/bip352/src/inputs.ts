import { assertBytes, bytesToHex, compactSize, compareBytes, concatBytes, equalBytes, hexToBytes, readCompactSize } from './bytes';
import { NUMS_H_HEX } from './constants';
import { hash160 } from './hash';

/** One transaction input as the scanner needs it (BIP-352 "Inputs For Shared Secret Derivation"). */
export interface ScanInput {
  /** txid of the spent output, hex as displayed (big-endian). */
  txid: string;
  /** output index of the spent output. */
  vout: number;
  /** the input's scriptSig (empty for native segwit). */
  scriptSig: Uint8Array;
  /** the input's witness stack, one array per item ([] when none). */
  witness: Uint8Array[];
  /** scriptPubKey of the spent output (the prevout). */
  prevoutScript: Uint8Array;
}

/** One transaction output: its index in the transaction and its scriptPubKey. */
export interface ScanOutput {
  index: number;
  script: Uint8Array;
}

const NUMS_H = hexToBytes(NUMS_H_HEX);

/** Witness version of a scriptPubKey (BIP-141: OP_0..OP_16 then one 2..40-byte push), or -1. */
export function witnessVersion(script: Uint8Array): number {
  const n = script.length;
  if (n < 4 || n > 42 || script[1] !== n - 2) return -1;
  const op = script[0] as number;
  if (op === 0x00) return 0;
  if (op >= 0x51 && op <= 0x60) return op - 0x50;
  return -1;
}

/** P2TR scriptPubKey: OP_1 <32 bytes> (0x5120…). */
export function isP2tr(script: Uint8Array): boolean {
  return script.length === 34 && script[0] === 0x51 && script[1] === 0x20;
}

/** P2WPKH scriptPubKey: OP_0 <20 bytes> (0x0014…). */
export function isP2wpkh(script: Uint8Array): boolean {
  return script.length === 22 && script[0] === 0x00 && script[1] === 0x14;
}

/** P2SH scriptPubKey: OP_HASH160 <20 bytes> OP_EQUAL (0xa914…87). */
export function isP2sh(script: Uint8Array): boolean {
  return script.length === 23 && script[0] === 0xa9 && script[1] === 0x14 && script[22] === 0x87;
}

/** P2PKH scriptPubKey: OP_DUP OP_HASH160 <20 bytes> OP_EQUALVERIFY OP_CHECKSIG (0x76a914…88ac). */
export function isP2pkh(script: Uint8Array): boolean {
  return (
    script.length === 25 && script[0] === 0x76 && script[1] === 0xa9 && script[2] === 0x14 && script[23] === 0x88 && script[24] === 0xac
  );
}

/**
 * BIP-352 "Scanning silent payment eligible transactions": a transaction that spends an output
 * of SegWit version 2 or higher is not scanned by v0 (and a v0 sender must not spend one).
 */
export function spendsUnknownSegwit(inputs: readonly ScanInput[]): boolean {
  for (const input of inputs) if (witnessVersion(input.prevoutScript) > 1) return true;
  return false;
}

function isCompressedKey(bytes: Uint8Array | undefined): bytes is Uint8Array {
  return bytes !== undefined && bytes.length === 33 && (bytes[0] === 0x02 || bytes[0] === 0x03);
}

/**
 * The public key an input contributes to the shared secret (BIP-352 "Inputs For Shared Secret
 * Derivation"), as 33 compressed bytes (a taproot output key as 0x02 || x), or null when the
 * input is not on the list. The bytes are checked for shape here; whether they are a point on the
 * curve is checked by the backend that parses them (an invalid key makes the input ineligible).
 * - P2TR: the output key from the scriptPubKey, for key and script path, except a script-path
 *   spend whose control block carries the NUMS point H as internal key; an annex (last item
 *   starting 0x50, with at least two items) is removed first.
 * - P2WPKH: the last witness item, when a compressed key.
 * - P2SH-P2WPKH: scriptSig exactly the push of 0x0014{20}; the last witness item, when compressed.
 * - P2PKH: the compressed key in the scriptSig whose HASH160 is the scriptPubKey's hash, searched
 *   from the end in 33-byte windows, so malleated scriptSigs (`<dummy> OP_DROP <sig> <key>`)
 *   still yield the key.
 * Uncompressed and hybrid keys never qualify.
 */
export function extractInputPublicKey(input: ScanInput): Uint8Array | null {
  const spk = input.prevoutScript;
  if (isP2tr(spk)) {
    const w = input.witness;
    let n = w.length;
    if (n === 0) return null;
    const last = w[n - 1] as Uint8Array;
    if (n > 1 && last.length > 0 && last[0] === 0x50) n--; // annex (BIP-341)
    if (n > 1) {
      const control = w[n - 1] as Uint8Array;
      if (control.length >= 33 && equalBytes(NUMS_H, control, 1, 32)) return null;
    }
    const key = new Uint8Array(33);
    key[0] = 0x02;
    key.set(spk.subarray(2, 34), 1);
    return key;
  }
  if (isP2wpkh(spk)) {
    const last = input.witness[input.witness.length - 1];
    return isCompressedKey(last) ? last : null;
  }
  if (isP2sh(spk)) {
    const sig = input.scriptSig;
    if (sig.length !== 23 || sig[0] !== 0x16 || !isP2wpkh(sig.subarray(1))) return null;
    const last = input.witness[input.witness.length - 1];
    return isCompressedKey(last) ? last : null;
  }
  if (isP2pkh(spk)) {
    const sig = input.scriptSig;
    const keyHash = spk.subarray(3, 23);
    for (let end = sig.length; end >= 33; end--) {
      const first = sig[end - 33];
      if (first !== 0x02 && first !== 0x03) continue; // only a compressed key can qualify
      const window = sig.subarray(end - 33, end);
      if (equalBytes(hash160(window), keyHash)) return window.slice();
    }
    return null;
  }
  return null;
}

/** Value of one hex digit (0-9, a-f, A-F), or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** outpoint (36 bytes): txid little-endian || vout little-endian (BIP-352 "Specification"). */
export function serializeOutpoint(txid: string, vout: number): Uint8Array {
  if (typeof txid !== 'string' || txid.length !== 64) {
    throw new TypeError(`"txid" expected 64 hex characters, got ${typeof txid === 'string' ? txid.length : typeof txid}`);
  }
  const out = new Uint8Array(36);
  // the displayed txid is big-endian: decode it straight into reversed order (no intermediate array)
  for (let i = 0; i < 32; i++) {
    const hi = hexDigit(txid.charCodeAt(2 * i));
    const lo = hexDigit(txid.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new TypeError(`"txid" expected hex, got a non-hex character at ${hi < 0 ? 2 * i : 2 * i + 1}`);
    out[31 - i] = (hi << 4) | lo;
  }
  if (!Number.isInteger(vout) || vout < 0 || vout > 0xffffffff) {
    throw new RangeError(`"vout" expected an integer 0..4294967295, got ${String(vout)}`);
  }
  out[32] = vout & 0xff;
  out[33] = (vout >>> 8) & 0xff;
  out[34] = (vout >>> 16) & 0xff;
  out[35] = (vout >>> 24) & 0xff;
  return out;
}

/** outpoint_L: the lexicographically smallest serialised outpoint over all inputs of the transaction. */
export function smallestOutpoint(inputs: readonly ScanInput[]): Uint8Array {
  let best: Uint8Array | undefined;
  for (const input of inputs) {
    const op = serializeOutpoint(input.txid, input.vout);
    if (best === undefined || compareBytes(op, best) < 0) best = op;
  }
  if (best === undefined) throw new RangeError('"inputs" expected at least one input');
  return best;
}

/** Reads a CompactSize of a witness at `offset` (its RangeErrors name the witness). */
function readWitnessSize(bytes: Uint8Array, offset: number): [number, number] {
  return readCompactSize(
    bytes,
    offset,
    (reason) => new RangeError(reason === 'truncated' ? 'witness: truncated CompactSize' : 'witness: CompactSize too large'),
  );
}

/**
 * Parses one input's serialised witness (CompactSize item count, then each item as CompactSize
 * length || bytes), the form of the BIP-352 vectors' `txinwitness`. Empty input → [].
 * @throws {RangeError} when truncated or followed by extra bytes.
 */
export function parseWitness(serialized: Uint8Array): Uint8Array[] {
  assertBytes(serialized, 'serialized');
  if (serialized.length === 0) return [];
  let [count, offset] = readWitnessSize(serialized, 0);
  const items: Uint8Array[] = [];
  while (count-- > 0) {
    const [len, next] = readWitnessSize(serialized, offset);
    if (next + len > serialized.length) throw new RangeError('witness: truncated item');
    items.push(serialized.slice(next, next + len));
    offset = next + len;
  }
  if (offset !== serialized.length) throw new RangeError('witness: extra bytes after the last item');
  return items;
}

/** Serialises a witness stack (inverse of {@link parseWitness}; [] → empty bytes, as in the vectors). */
export function serializeWitness(items: readonly Uint8Array[]): Uint8Array {
  if (items.length === 0) return new Uint8Array(0);
  const parts: Uint8Array[] = [compactSize(items.length)];
  for (const item of items) parts.push(compactSize(item.length), item);
  return concatBytes(...parts);
}

/** Hex of a witness stack, for logs and tests. */
export function witnessToHex(items: readonly Uint8Array[]): string[] {
  return items.map((item) => bytesToHex(item));
}
