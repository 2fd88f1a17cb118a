/**
 * One pass over the bytes of a JSON request body, for what JSON.parse hides: how many object
 * keys the text has (a key repeated in an object is kept once by JSON.parse, which keeps the
 * last, while Core's UniValue keeps both and reads the first: `find_value` in
 * src/univalue/lib/univalue.cpp), and whether Core and JSON.parse certainly read it alike.
 */
export interface BodyScan {
  /** Object keys written in the text, nested ones included (compare with {@link countKeys} of the parsed value). */
  keys: number;
  /**
   * Only printable ASCII (no byte Core would reject as invalid UTF-8 while Node replaces it)
   * and every number a safe integer written canonically (`1.0`, `1e0`, `-0` and 2^53 and
   * beyond are read alike by JSON.parse but not by Core).
   */
  plain: boolean;
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

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Scans a body that JSON.parse accepted (so its structure is valid JSON). */
export function scanBody(raw: Buffer): BodyScan {
  let keys = 0;
  let plain = true;
  let inString = false;
  // Index of the last closing quote when only blanks followed it: a `:` then makes it a key.
  let stringEnd = -1;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as number;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        inString = false;
        stringEnd = i;
      } else if (c < 0x20 || c > 0x7e) plain = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (isBlank(c)) continue;
    if (c === 0x3a && stringEnd >= 0) keys++;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < raw.length && isNumberByte(raw[end] as number)) end++;
      if (plain && !canonicalInteger(raw, i, end)) plain = false;
      i = end - 1;
    } else if (c > 0x7e || c < 0x20) plain = false;
    stringEnd = -1;
  }
  return { keys, plain };
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
