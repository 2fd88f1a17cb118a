import { isAscii } from 'node:buffer';
import { JSON_BYTE_CLASS, JsonByte, jsonStringEnd } from '@repo/json-rpc';

/**
 * One pass over the bytes of a JSON request body, run before JSON.parse: how deep it nests (the
 * bound checked before a parse, so a body of ten million `[` costs a scan), and what JSON.parse
 * hides: how many object keys the text has (a key repeated in an object is kept once by
 * JSON.parse, which keeps the last, while Core's UniValue keeps both and reads the first:
 * `find_value` in src/univalue/lib/univalue.cpp), and whether Core and JSON.parse certainly read
 * it alike. `keys` and `plain` mean something only for a body JSON.parse accepts.
 */
export interface BodyScan {
  /** The deepest nesting of `[` and `{` (strings skipped); past the scan's `maxDepth` it stops there, with a value above it. */
  depth: number;
  /** Object keys written in the text, nested ones included (compare with {@link countKeys} of the parsed value). */
  keys: number;
  /**
   * Only printable ASCII (no byte Core would reject as invalid UTF-8 while Node replaces it)
   * and every number a safe integer written canonically (`1.0`, `1e0`, `-0` and 2^53 and
   * beyond are read alike by JSON.parse but not by Core).
   */
  plain: boolean;
  /**
   * Every string's bytes printable ASCII and no `\u` escape among them: Core reads each string
   * as JSON.parse does (`coreAcceptsStrings` of @repo/json-rpc holds for such a body, and need
   * not be asked). False says nothing: that check is then to be made.
   */
  asciiStrings: boolean;
}

/** True for a number token written as Core echoes and JSON.stringify writes it: a safe integer, no `-0`, no leading zero. */
function canonicalInteger(raw: Buffer, start: number, end: number): boolean {
  let i = start;
  if (raw[i] === 0x2d) i++;
  if (i >= end) return false;
  if (raw[i] === 0x30) return end === i + 1 && i === start; // 0 alone; never -0 or 01
  for (let j = i; j < end; j++) {
    const c = raw[j] as number;
    if (c < 0x30 || c > 0x39) return false; // a fraction or an exponent
  }
  return end - i <= 15; // below 2^53: the value is the text
}

// What a byte is outside strings (@repo/json-rpc's table, its classes copied into constants here:
// compared once a byte).
const CLASS = JSON_BYTE_CLASS;
const { BLANK, QUOTE, OPEN, CLOSE, COLON, NUMBER, UNPRINTABLE } = JsonByte;
/** Inside a string: 0 for a byte that is part of it as it is, 1 for the quote and the backslash, 2 for a byte that is not printable ASCII. */
const IN_STRING = new Uint8Array(256).fill(2);
for (let c = 0x20; c <= 0x7e; c++) IN_STRING[c] = 0;
IN_STRING[0x22] = IN_STRING[0x5c] = 1;

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

/** `\u`, the escape that can write half of a surrogate pair in ASCII. */
const ESCAPE_U = Buffer.from('\\u', 'latin1');

/** Bodies from this size are checked natively before the loop (see {@link scanBody}). */
const NATIVE_BODY = 256;

/** Scans a request body (see {@link BodyScan}); stops once it nests deeper than `maxDepth`. */
export function scanBody(raw: Buffer, maxDepth = Number.POSITIVE_INFINITY): BodyScan {
  let depth = 0;
  let deepest = 0;
  let keys = 0;
  const n = raw.length;
  // A longer body (a transaction's hex) is checked natively first, for printable ASCII: JSON.parse
  // refuses control characters in strings and anything but blanks between tokens, so for a body it
  // accepts this is the same as checking each string's bytes, and each string's end is then found
  // natively past its first bytes (jsonStringEnd). Two native calls cost more than a short body's
  // loop, which checks each byte of its strings instead.
  const native = n >= NATIVE_BODY;
  let plain = !native || (isAscii(raw) && raw.indexOf(0x7f) < 0);
  // A long body's strings: printable ASCII when the whole body is, then one search for `\u`.
  let asciiStrings = native ? plain && raw.indexOf(ESCAPE_U) < 0 : true;
  // Index of the last closing quote when only blanks followed it: a `:` then makes it a key.
  let stringEnd = -1;
  for (let i = 0; i < n; i++) {
    const kind = CLASS[raw[i] as number] as number;
    if (kind === BLANK) continue;
    if (kind === QUOTE) {
      if (native) {
        i = stringEnd = jsonStringEnd(raw, i);
        continue;
      }
      // To the closing quote, over escapes.
      for (i++; i < n; i++) {
        const k = IN_STRING[raw[i] as number];
        if (k === 0) continue;
        if (k === 2) plain = asciiStrings = false;
        else if (raw[i] === 0x5c) {
          if (raw[++i] === 0x75) asciiStrings = false; // \u: maybe a surrogate half
        } else break;
      }
      stringEnd = i;
      continue;
    }
    if (kind === OPEN) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > maxDepth) return { depth: deepest, keys, plain, asciiStrings: false };
      }
    } else if (kind === CLOSE) depth--;
    else if (kind === COLON) {
      if (stringEnd >= 0) keys++;
    } else if (kind === NUMBER) {
      let end = i + 1;
      while (end < n && isNumberByte(raw[end] as number)) end++;
      if (plain && !canonicalInteger(raw, i, end)) plain = false;
      i = end - 1;
    } else if (kind === UNPRINTABLE) plain = false;
    stringEnd = -1;
  }
  return { depth: deepest, keys, plain, asciiStrings };
}

/** Object keys in a parsed JSON value, nested ones included. */
export function countKeys(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) n += countKeys(v);
    return n;
  }
  const record = value as Record<string, unknown>;
  for (const k in record) if (Object.prototype.hasOwnProperty.call(record, k)) n += 1 + countKeys(record[k]);
  return n;
}
