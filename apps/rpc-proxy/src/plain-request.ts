import type { IncomingHttpHeaders } from 'node:http';

/**
 * The front end's reader of the plainest requests (docs/rpc-proxy.md, "The front end"): a head
 * written in a narrow subset of HTTP/1.1, read here byte by byte without calling into llhttp. The
 * subset is chosen so that any head it accepts means the same to llhttp (strict, as node:http runs
 * it): one reading only, nothing normalised, nothing llhttp would refuse. Anything outside it is
 * left to llhttp, as before:
 *
 * - the request line is `POST <target> HTTP/1.1`, one space each, the target beginning with `/`
 *   and made of letters, digits and `-._~!$&'()*+,;=:@/%` only (no `?`, `#` or anything else);
 * - each header line is a name of letters, digits and `-`, a colon, optional spaces or tabs, and a
 *   non-empty value of visible ASCII and inner spaces or tabs (none at its end); lines end with
 *   CR LF; at most 31 of them;
 * - no name is given twice (in any case); no `Transfer-Encoding`, `Expect`, `Upgrade` or
 *   `Proxy-Connection` (which llhttp reads as `Connection`); `Content-Length` only 1 to 15 digits
 *   (the caller has read the one length); `Connection` only `keep-alive` or `close`.
 *
 * The test suite reads thousands of heads, plain and mangled, both ways and requires the same
 * request or a refusal here (test/plain-request.test.ts).
 */

/** A request head read here: what llhttp's headers callback gives the front end. */
export interface PlainHead {
  method: 'POST';
  url: string;
  headers: IncomingHttpHeaders;
  keepAlive: boolean;
}

/** Header lines read at most (llhttp hands 32 or more to JavaScript in pieces: the front end leaves those to node:http). */
const MAX_HEADERS = 31;

/** Names whose requests llhttp reads otherwise than as plain headers, or node:http answers otherwise. */
const REFUSED = new Set(['transfer-encoding', 'expect', 'upgrade', 'proxy-connection']);

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** Bytes of a request target read here: letters, digits and -._~!$&'()*+,;=:@/% */
const TARGET = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%");
/** Bytes of a header name read here: letters, digits and '-' (a subset of HTTP's token). */
const NAME = byteSet('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-');

function byteSet(chars: string): Uint8Array {
  const set = new Uint8Array(256);
  for (let i = 0; i < chars.length; i++) set[chars.charCodeAt(i)] = 1;
  return set;
}

const REQUEST_START = Buffer.from('POST ', 'latin1');
const VERSION_END = Buffer.from(' HTTP/1.1\r\n', 'latin1');

/** Whether `bytes` has `expected` at `at` (byte by byte: Buffer#compare costs more than a short head's loop). */
function startsWith(bytes: Buffer, at: number, expected: Buffer): boolean {
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/**
 * The names clients send most, lower case; read from the bytes without making a string of each
 * (a name not among them is read as a string and lowered).
 */
const KNOWN_NAMES = [
  'host',
  'authorization',
  'content-type',
  'content-length',
  'connection',
  'user-agent',
  'accept',
  'accept-encoding',
  'x-request-id',
  'x-forwarded-for',
];
const KNOWN_BYTES = KNOWN_NAMES.map((n) => Buffer.from(n, 'latin1'));

/** The lower-case name of bytes[from, to) (a name of NAME bytes). */
function nameOf(bytes: Buffer, from: number, to: number): string {
  const length = to - from;
  for (let k = 0; k < KNOWN_BYTES.length; k++) {
    const known = KNOWN_BYTES[k] as Buffer;
    if (known.length !== length) continue;
    let i = 0;
    // `| 0x20` lowers a letter and leaves digits and '-' as they are (the only bytes of a name here).
    while (i < length && ((bytes[from + i] as number) | 0x20) === known[i]) i++;
    if (i === length) return KNOWN_NAMES[k] as string;
  }
  return bytes.toString('latin1', from, to).toLowerCase();
}

/** Whether bytes[from, to) is 1 to 15 digits. */
function allDigits(bytes: Buffer, from: number, to: number): boolean {
  if (to - from > 15) return false;
  for (let i = from; i < to; i++) if ((bytes[i] as number) < 0x30 || (bytes[i] as number) > 0x39) return false;
  return true;
}

/** The Connection value `bytes[from, to)`: 1 for keep-alive, 0 for close, -1 for anything else. */
function connectionValue(bytes: Buffer, from: number, to: number): number {
  const text = bytes.toString('latin1', from, to).toLowerCase();
  return text === 'keep-alive' ? 1 : text === 'close' ? 0 : -1;
}

/**
 * The head `bytes[0, headEnd)` (headEnd: where its blank line's CR LF CR LF begins) when it is
 * written in the subset above; undefined for anything else (llhttp reads it then).
 */
export function readPlainHead(bytes: Buffer, headEnd: number): PlainHead | undefined {
  if (!startsWith(bytes, 0, REQUEST_START)) return undefined;
  let at = REQUEST_START.length;
  if (bytes[at] !== 0x2f) return undefined; // '/'
  while (at < headEnd && TARGET[bytes[at] as number] === 1) at++;
  const targetEnd = at;
  if (!startsWith(bytes, at, VERSION_END)) return undefined;
  at += VERSION_END.length;
  const headers: IncomingHttpHeaders = {};
  let keepAlive = true;
  let count = 0;
  // Header lines, each ending with CR LF; the last one's CR LF is at headEnd.
  while (at < headEnd + 2) {
    if (++count > MAX_HEADERS) return undefined;
    const nameStart = at;
    while (NAME[bytes[at] as number] === 1) at++;
    if (at === nameStart || bytes[at] !== COLON) return undefined;
    const name = nameOf(bytes, nameStart, at);
    at++;
    while (bytes[at] === SP || bytes[at] === HTAB) at++;
    const valueStart = at;
    // Visible ASCII and inner blanks, up to CR LF.
    for (let c = bytes[at] as number; c !== CR; c = bytes[++at] as number) {
      if ((c < 0x21 || c > 0x7e) && c !== SP && c !== HTAB) return undefined;
    }
    if (bytes[at + 1] !== LF || at === valueStart || bytes[at - 1] === SP || bytes[at - 1] === HTAB) return undefined;
    if (headers[name] !== undefined || REFUSED.has(name)) return undefined;
    if (name === 'content-length' && !allDigits(bytes, valueStart, at)) return undefined;
    if (name === 'connection') {
      const kind = connectionValue(bytes, valueStart, at);
      if (kind < 0) return undefined;
      keepAlive = kind === 1;
    }
    headers[name] = bytes.toString('latin1', valueStart, at);
    at += 2;
  }
  if (at !== headEnd + 2) return undefined;
  return { method: 'POST', url: bytes.toString('latin1', REQUEST_START.length, targetEnd), headers, keepAlive };
}
