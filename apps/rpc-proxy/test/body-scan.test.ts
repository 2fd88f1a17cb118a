import { jsonDepth } from '@repo/http';
import { coreAcceptsStrings } from '@repo/json-rpc';
import { countKeys, scanBody } from '../src/body-scan';
import { scanCoalescable } from '../src/coalesce';
import { random } from './support/random';

/**
 * The two passes scanBody replaced, as they were: jsonDepth before the parse, then a byte-by-byte
 * scan of keys and plainness after it (one comparison chain a byte, every string read to its end).
 */
function reference(raw: Buffer): { depth: number; keys: number; plain: boolean; asciiStrings: boolean } {
  const blank = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
  const numberByte = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
  const canonical = (start: number, end: number) => {
    let i = start;
    if (raw[i] === 0x2d) i++;
    if (i >= end) return false;
    if (raw[i] === 0x30) return end === i + 1 && i === start;
    for (let j = i; j < end; j++) if ((raw[j] as number) < 0x30 || (raw[j] as number) > 0x39) return false;
    return end - i <= 15;
  };
  let keys = 0;
  let plain = true;
  let asciiStrings = true;
  let inString = false;
  let stringEnd = -1;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as number;
    if (inString) {
      if (c === 0x5c) {
        if (raw[i + 1] === 0x75) asciiStrings = false;
        i++;
      } else if (c === 0x22) {
        inString = false;
        stringEnd = i;
      } else if (c < 0x20 || c > 0x7e) plain = asciiStrings = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (blank(c)) continue;
    if (c === 0x3a && stringEnd >= 0) keys++;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < raw.length && numberByte(raw[end] as number)) end++;
      if (plain && !canonical(i, end)) plain = false;
      i = end - 1;
    } else if (c > 0x7e || c < 0x20) plain = false;
    stringEnd = -1;
  }
  return { depth: jsonDepth(raw, Number.POSITIVE_INFINITY), keys, plain, asciiStrings };
}

describe('scanBody', () => {
  it('reads short and long bodies (natively checked from 256 bytes) as the two passes it replaced', () => {
    // '\ud800' and '\udc00' are written as \u escapes by JSON.stringify.
    const strings = ['', 'a', '"', '\\', 'é', '😀', '\u007f', '\n', 'x'.repeat(15), 'ab'.repeat(150), ':', ',', '\ud800', '\udc00'];
    const numbers = ['0', '-1', '1.0', '1e0', '-0', '9007199254740993', '123456789012345', '01'];
    for (let seed = 1; seed <= 600; seed++) {
      const next = random(seed);
      const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)] as T;
      const value = (depth: number): string => {
        const r = next();
        if (depth > 3 || r < 0.35) return JSON.stringify(Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(strings)).join(''));
        if (r < 0.55) return pick(numbers);
        if (r < 0.75) return `[${Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1)).join(pick([',', ' , ']))}]`;
        const keys = Array.from({ length: Math.floor(next() * 4) }, () => pick(['"method"', '"params"', '"a"', '"a"', '"id"']));
        return `{${keys.map((k) => `${k}${pick([':', ' : '])}${value(depth + 1)}`).join(',')}}`;
      };
      const text = `{"jsonrpc":"1.0","id":${pick(numbers)},"method":"m","params":[${value(0)}, ${value(0)}]}`;
      const raw = Buffer.from(text, 'utf8');
      const expected = reference(raw);
      const scan = scanBody(raw);
      expect([seed, scan.depth]).toEqual([seed, expected.depth]);
      // Keys and plainness mean something for a body JSON.parse accepts (the handler parses first).
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        continue;
      }
      expect([seed, text.length, scan]).toEqual([seed, text.length, expected]);
      expect(scanCoalescable(raw, parsed, scan)).toBe(expected.plain && expected.keys === countKeys(parsed));
      // What the handler skips on its word: Core's reading of the strings.
      if (scan.asciiStrings) expect([seed, coreAcceptsStrings(raw)]).toEqual([seed, true]);
    }
  });

  it('finds what is not plain in a long body without backslashes, and in one with them', () => {
    const hex = 'ab'.repeat(200);
    const body = (extra: string) => Buffer.from(`{"method":"sendrawtransaction","params":["${hex}"${extra}]}`, 'utf8');
    expect(scanBody(body('')).plain).toBe(true);
    expect(scanBody(body(',"caf\u00e9"')).plain).toBe(false);
    expect(scanBody(body(',"a\u007fb"')).plain).toBe(false);
    expect(scanBody(body(',1.0')).plain).toBe(false);
    expect(scanBody(body(',"a\\"b"')).plain).toBe(true);
    expect(scanBody(body(',"a\\"\u00e9"')).plain).toBe(false);
    // A key after a long string: counted as the two passes counted it.
    expect(scanBody(body(',{"k":1,"k":2}')).keys).toBe(4);
  });

  it('stops once the body nests deeper than the bound', () => {
    const deep = Buffer.from(`${'['.repeat(1000)}${']'.repeat(1000)}`);
    expect(scanBody(deep, 512).depth).toBe(513);
    expect(scanBody(deep).depth).toBe(1000);
    // Brackets inside strings, long and short, do not nest.
    expect(scanBody(Buffer.from(`["${'['.repeat(600)}"]`), 512).depth).toBe(1);
    expect(scanBody(Buffer.from(`["${'['.repeat(10)}\\"["]`), 512).depth).toBe(1);
  });
});
