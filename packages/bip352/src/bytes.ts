import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

export { bytesToHex, hexToBytes };

/** Throws a TypeError naming the argument unless `value` is a Uint8Array of `length` bytes. */
export function assertBytes(value: unknown, name: string, ...lengths: number[]): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new TypeError(`"${name}" expected Uint8Array, got ${value === null ? 'null' : typeof value}`);
  }
  if (lengths.length > 0 && !lengths.includes(value.length)) {
    throw new TypeError(`"${name}" expected Uint8Array of length ${lengths.join(' or ')}, got length=${value.length}`);
  }
}

/** Throws a RangeError unless `m` is an integer label index 0 ≤ m < 2^32 (ser32). */
export function assertLabel(m: unknown, name = 'm'): asserts m is number {
  if (typeof m !== 'number' || !Number.isInteger(m) || m < 0 || m > 0xffffffff) {
    throw new RangeError(`"${name}" expected an integer label index 0..4294967295, got ${String(m)}`);
  }
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Bitcoin's CompactSize of `n` (0 ≤ n < 2^32): one byte below 0xfd, else 0xfd/0xfe and 2 or 4
 * bytes little-endian (transactions, witnesses, PSBT maps).
 */
export function compactSize(n: number): Uint8Array {
  if (n < 0xfd) return Uint8Array.of(n);
  if (n <= 0xffff) return Uint8Array.of(0xfd, n & 0xff, n >>> 8);
  return Uint8Array.of(0xfe, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
}

/**
 * Reads a CompactSize at `offset`: [value, offset after it]. Throws what `fail` makes of the reason
 * when the bytes end first or the value is above 2^53 − 1 (no length or count is that large);
 * by default a RangeError.
 */
export function readCompactSize(
  bytes: Uint8Array,
  offset: number,
  fail: (reason: 'truncated' | 'too large') => Error = (reason) => new RangeError(`CompactSize ${reason}`),
): [number, number] {
  const first = bytes[offset];
  if (first === undefined) throw fail('truncated');
  if (first < 0xfd) return [first, offset + 1];
  const size = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
  if (offset + 1 + size > bytes.length) throw fail('truncated');
  let value = 0;
  for (let i = size - 1; i >= 0; i--) value = value * 256 + (bytes[offset + 1 + i] as number);
  if (value > Number.MAX_SAFE_INTEGER) throw fail('too large');
  return [value, offset + 1 + size];
}

/** 4 bytes, little-endian (nVersion, vout, nSequence, nLockTime). */
export function u32le(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0, true);
  return out;
}

/** 8 bytes, little-endian (an output's amount in satoshis). */
export function u64le(n: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, true);
  return out;
}

/** ser32(i): 4 bytes, most significant first (BIP-352 "Specification"). */
export function ser32(i: number): Uint8Array {
  const out = new Uint8Array(4);
  out[0] = (i >>> 24) & 0xff;
  out[1] = (i >>> 16) & 0xff;
  out[2] = (i >>> 8) & 0xff;
  out[3] = i & 0xff;
  return out;
}

/** Byte equality (not constant time: public data only). */
export function equalBytes(a: Uint8Array, b: Uint8Array, bOffset = 0, length = b.length - bOffset): boolean {
  if (a.length !== length) return false;
  for (let i = 0; i < length; i++) if (a[i] !== b[bOffset + i]) return false;
  return true;
}

/** Lexicographic comparison of two byte arrays (-1, 0, 1). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * The top 48 bits of a 32-byte big-endian value at `offset`, as a number: a cheap Map key for
 * x-coordinates (no string, no allocation). Candidates that share a key are compared in full.
 */
export function key48(bytes: Uint8Array, offset = 0): number {
  return (
    (bytes[offset] as number) * 0x10000000000 +
    (bytes[offset + 1] as number) * 0x100000000 +
    (((bytes[offset + 2] as number) << 24) >>> 0) +
    ((bytes[offset + 3] as number) << 16) +
    ((bytes[offset + 4] as number) << 8) +
    (bytes[offset + 5] as number)
  );
}

/** Big-endian bytes to bigint. */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + bytesToHex(bytes));
}

/** bigint to 32 big-endian bytes. */
export function bigIntTo32(n: bigint): Uint8Array {
  return hexToBytes(n.toString(16).padStart(64, '0'));
}

/** Hex string check and decoding with the argument named in the error. */
export function parseHex(value: unknown, name: string, length?: number): Uint8Array {
  if (typeof value !== 'string' || value.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(value)) {
    throw new TypeError(`"${name}" expected an even-length hex string`);
  }
  const bytes = hexToBytes(value);
  if (length !== undefined && bytes.length !== length) {
    throw new TypeError(`"${name}" expected ${length} bytes of hex, got ${bytes.length}`);
  }
  return bytes;
}
