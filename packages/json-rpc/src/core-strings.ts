import { isAscii } from 'node:buffer';

/**
 * Whether Bitcoin Core's JSON reader accepts every string of a body that JSON.parse accepted.
 * Core checks the UTF-8 of each string as it reads it (`JSONUTF8StringFilter` in
 * src/univalue/include/univalue_utffilter.h) and answers the whole body as a parse error when
 * one is invalid, where Node replaces the bytes with U+FFFD and JSON.parse keeps lone UTF-16
 * surrogates: a body Core refuses must not be checked, answered or forwarded element by element.
 * Core's own rules, not the UTF-8 standard's: a byte 0x80–0xBF out of a sequence, a lead byte
 * 0xF8 and above, a sequence cut short, or a surrogate (escaped `\uD800` or written in UTF-8)
 * not paired high then low is refused; overlong forms and code points above U+10FFFF are not.
 */
export function coreAcceptsStrings(raw: Buffer): boolean {
  // The usual body: ASCII only, without \u escapes (the only way to write a surrogate in ASCII).
  if (isAscii(raw) && raw.indexOf('\\u') < 0) return true;
  let inString = false;
  /** Bits of the sequence still to come (6 per continuation byte), its code point so far. */
  let state = 0;
  let codepoint = 0;
  /** The high surrogate waiting for its low half (0: none). */
  let surrogate = 0;
  /** Core's push_back_u: a whole code point (escaped or decoded); false when refused. */
  const codepointOk = (cp: number): boolean => {
    if (state !== 0) return false;
    if (cp >= 0xd800 && cp < 0xdc00) {
      if (surrogate !== 0) return false;
      surrogate = cp;
    } else if (cp >= 0xdc00 && cp < 0xe000) {
      if (surrogate === 0) return false;
      surrogate = 0;
    } else if (surrogate !== 0) return false;
    return true;
  };
  /** Core's push_back: one byte of the string as written (or an escaped ASCII character). */
  const byteOk = (c: number): boolean => {
    if (state === 0) {
      if (c < 0x80) return true; // ASCII is appended as it is, without looking at a pending surrogate (as Core)
      if (c < 0xc0 || c >= 0xf8) return false;
      if (c < 0xe0) [codepoint, state] = [(c & 0x1f) << 6, 6];
      else if (c < 0xf0) [codepoint, state] = [(c & 0x0f) << 12, 12];
      else [codepoint, state] = [(c & 0x07) << 18, 18];
      return true;
    }
    if ((c & 0xc0) !== 0x80) return false;
    state -= 6;
    codepoint |= (c & 0x3f) << state;
    return state !== 0 || codepointOk(codepoint);
  };
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as number;
    if (!inString) {
      if (c === 0x22) [inString, state, surrogate] = [true, 0, 0];
      continue;
    }
    if (c === 0x22) {
      if (state !== 0 || surrogate !== 0) return false; // Core's finalize(): nothing left open
      inString = false;
    } else if (c === 0x5c) {
      const escaped = raw[i + 1] as number;
      if (escaped === 0x75) {
        if (!codepointOk(parseInt(raw.toString('latin1', i + 2, i + 6), 16))) return false;
        i += 5;
      } else {
        if (!byteOk(escaped)) return false;
        i += 1;
      }
    } else if (!byteOk(c)) return false;
  }
  return true;
}
