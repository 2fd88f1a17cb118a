import type { IncomingHttpHeaders } from 'node:http';
import type { HttpParserBinding } from './llhttp';

/**
 * How the front end (src/fast-front.ts; docs/rpc-proxy.md, "The front end") reads a request's
 * head from its bytes, two ways that read alike:
 *
 * - {@link readPlainHead}: the plainest heads, byte by byte, without calling into llhttp; a head in
 *   a narrow subset of HTTP/1.1, chosen so that any head it accepts means the same to llhttp
 *   (strict, as node:http runs it): one reading only, nothing normalised, nothing llhttp would
 *   refuse;
 * - {@link createLlhttpHeadReader}: any other head, by Node's own HTTP parser, once the whole
 *   request has arrived ({@link announcedLength} says how long it is).
 *
 * The subset read by hand:
 *
 * - the request line is `POST <target> HTTP/1.1`, one space each, the target beginning with `/`
 *   and made of letters, digits and `-._~!$&'()*+,;=:@/%` only (no `?`, `#` or anything else);
 * - each header line is a name of letters, digits and `-`, a colon, optional spaces or tabs, and a
 *   non-empty value of visible ASCII and inner spaces or tabs (none at its end); lines end with
 *   CR LF; at most 31 of them;
 * - no name is given twice (in any case); no `Transfer-Encoding`, `Expect`, `Upgrade` or
 *   `Proxy-Connection` (which llhttp reads as `Connection`); `Content-Length` only 1 to 15 digits;
 *   `Connection` only `keep-alive` or `close`.
 *
 * The test suite reads thousands of heads, plain and mangled, both ways and requires the same
 * request from both, or a refusal from the plain reader (test/request-head.test.ts).
 */

/** A request's head as the front end takes it: every header once, names in lower case. */
export interface RequestHead {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  keepAlive: boolean;
}

/** A head read by {@link readPlainHead}, with the length of the body it announces. */
export interface PlainHead extends RequestHead {
  bodyLength: number;
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

/** A space or a tab (HTTP's optional whitespace around a header value). */
function isBlank(c: number | undefined): boolean {
  return c === SP || c === HTAB;
}

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
function nameOf(bytes: Buffer, text: string, from: number, to: number): string {
  const length = to - from;
  for (let k = 0; k < KNOWN_BYTES.length; k++) {
    const known = KNOWN_BYTES[k] as Buffer;
    if (known.length !== length) continue;
    let i = 0;
    // `| 0x20` lowers a letter and leaves digits and '-' as they are (the only bytes of a name here).
    while (i < length && ((bytes[from + i] as number) | 0x20) === known[i]) i++;
    if (i === length) return KNOWN_NAMES[k] as string;
  }
  return text.slice(from, to).toLowerCase();
}

/** The Connection value `bytes[from, to)`: 1 for keep-alive, 0 for close, -1 for anything else. */
function connectionValue(value: string): number {
  const lower = value.toLowerCase();
  return lower === 'keep-alive' ? 1 : lower === 'close' ? 0 : -1;
}

/**
 * The head `bytes[0, headEnd)` (headEnd: where its blank line's CR LF CR LF begins) when it is
 * written in the subset above; undefined for anything else (llhttp reads it then). Reads only the
 * head: the body may not have arrived yet.
 */
export function readPlainHead(bytes: Buffer, headEnd: number): PlainHead | undefined {
  if (!startsWith(bytes, 0, REQUEST_START)) return undefined;
  let at = REQUEST_START.length;
  if (bytes[at] !== 0x2f) return undefined; // '/'
  while (at < headEnd && TARGET[bytes[at] as number] === 1) at++;
  const targetEnd = at;
  if (!startsWith(bytes, at, VERSION_END)) return undefined;
  at += VERSION_END.length;
  // The head decoded once (one native call; latin1: one character a byte, so the text's offsets
  // are the bytes'), its target and values then cut from the text.
  const text = bytes.toString('latin1', 0, headEnd);
  const headers: IncomingHttpHeaders = {};
  let keepAlive = true;
  let bodyLength = 0;
  let count = 0;
  // Header lines, each ending with CR LF; the last one's CR LF is at headEnd.
  while (at < headEnd + 2) {
    if (++count > MAX_HEADERS) return undefined;
    const nameStart = at;
    while (NAME[bytes[at] as number] === 1) at++;
    if (at === nameStart || bytes[at] !== COLON) return undefined;
    const name = nameOf(bytes, text, nameStart, at);
    at++;
    while (isBlank(bytes[at])) at++;
    const valueStart = at;
    // Visible ASCII and inner blanks, up to CR LF.
    for (let c = bytes[at] as number; c !== CR; c = bytes[++at] as number) {
      if ((c < 0x21 || c > 0x7e) && !isBlank(c)) return undefined;
    }
    if (bytes[at + 1] !== LF || at === valueStart || isBlank(bytes[at - 1])) return undefined;
    if (headers[name] !== undefined || REFUSED.has(name)) return undefined;
    if (name === 'content-length') {
      bodyLength = digitsValue(bytes, valueStart, at);
      if (Number.isNaN(bodyLength)) return undefined;
    }
    const value = text.slice(valueStart, at);
    if (name === 'connection') {
      const kind = connectionValue(value);
      if (kind < 0) return undefined;
      keepAlive = kind === 1;
    }
    headers[name] = value;
    at += 2;
  }
  if (at !== headEnd + 2) return undefined;
  return { method: 'POST', url: text.slice(REQUEST_START.length, targetEnd), headers, keepAlive, bodyLength };
}

/**
 * The front end's reader of whole requests with llhttp (strict, headers within `maxHeaderSize` bytes):
 * the head of `request` when llhttp reads it as exactly one whole HTTP/1.1 request, no upgrade,
 * fewer than 32 headers, each once, no `Transfer-Encoding` or `Expect` (node:http's own rules
 * apply to those); undefined otherwise. One parser for all the calls: each request is read alone,
 * at once, from its first byte.
 */
export function createLlhttpHeadReader({
  HTTPParser,
  methods,
}: HttpParserBinding): (request: Buffer, maxHeaderSize: number) => RequestHead | undefined {
  const parser = new HTTPParser();
  const resource = {};
  /** The header limit the parser was set to, while it is at the start of a request (as after initialize()). */
  let readyFor: number | undefined;
  let head: RequestHead | undefined;
  let bad = false;
  let complete = false;
  parser[HTTPParser.kOnHeadersComplete] = (
    major: number,
    minor: number,
    raw: string[] | undefined,
    method: number,
    url: string | undefined,
    _status: unknown,
    _message: unknown,
    upgrade: boolean,
    keepAlive: boolean,
  ) => {
    const name = methods[method];
    if (raw === undefined || url === undefined || name === undefined || major !== 1 || minor !== 1 || upgrade) {
      bad = true;
      return 0;
    }
    const headers: IncomingHttpHeaders = {};
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = (raw[i] as string).toLowerCase();
      // A repeated header (or a name an object already has), a chunked body, Expect: node:http's own rules apply.
      if (headers[key] !== undefined || key === 'transfer-encoding' || key === 'expect') {
        bad = true;
        return 0;
      }
      headers[key] = raw[i + 1];
    }
    head = { method: name, url, headers, keepAlive };
    return 0;
  };
  // Headers flushed before their end (32 pairs or more): node:http's to read.
  parser[HTTPParser.kOnHeaders] = () => {
    bad = true;
  };
  // No kOnBody: the caller cuts the body from the bytes themselves.
  parser[HTTPParser.kOnMessageComplete] = () => {
    if (complete) bad = true;
    complete = true;
  };
  return (request, maxHeaderSize) => {
    head = undefined;
    bad = false;
    complete = false;
    if (readyFor !== maxHeaderSize) parser.initialize(HTTPParser.REQUEST, resource, maxHeaderSize, HTTPParser.kLenientNone);
    const read = parser.execute(request);
    // Exactly `request`, head to the first blank line (no bare LF line ends: kLenientNone) and a
    // body of its one Content-Length: the rest of the bytes.
    // (`head` is set by the callback during execute(), which TypeScript cannot see.)
    const whole = read === request.length && complete && !bad ? (head as RequestHead | undefined) : undefined;
    // After one whole kept-alive request llhttp is where a fresh one starts: the next needs no
    // initialize(), unless it comes with another limit.
    readyFor = whole?.keepAlive === true ? maxHeaderSize : undefined;
    return whole;
  };
}

/**
 * The body length the head (`bytes` up to `headEnd`) announces with one `Content-Length` of
 * digits; 0 with none; NaN when there is anything else to it (several, a sign, no digits):
 * such a request is node:http's to answer.
 */
export function announcedLength(bytes: Buffer, headEnd: number): number {
  let found = 0;
  let seen = false;
  // One pass over the head's bytes, line by line (a line ends at CR LF); no string made.
  for (let at = 0; at < headEnd;) {
    let lineEnd = at;
    while (lineEnd < headEnd && !(bytes[lineEnd] === CR && bytes[lineEnd + 1] === LF)) lineEnd++;
    if (lineEnd - at > 15 && isContentLength(bytes, at)) {
      if (seen) return Number.NaN;
      seen = true;
      found = digitsValue(bytes, at + 15, lineEnd);
    }
    at = lineEnd + 2;
  }
  return found;
}

/** The value of `bytes[from, to)`: 1 to 15 digits between optional spaces and tabs; NaN for anything else. */
function digitsValue(bytes: Buffer, from: number, to: number): number {
  while (from < to && isBlank(bytes[from])) from++;
  while (to > from && isBlank(bytes[to - 1])) to--;
  if (to === from || to - from > 15) return Number.NaN;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = bytes[i] as number;
    if (c < 0x30 || c > 0x39) return Number.NaN;
    value = value * 10 + (c - 0x30);
  }
  return value;
}

/** `content-length:` in lower case, byte by byte. */
const CONTENT_LENGTH = Buffer.from('content-length:', 'latin1');

/** Whether the header line at `at` starts with `Content-Length:`, in any case (no string made). */
function isContentLength(bytes: Buffer, at: number): boolean {
  for (let i = 0; i < CONTENT_LENGTH.length; i++) {
    // Setting 0x20 lowers a letter and leaves `-` and `:` as they are (it also turns some control
    // bytes into them, which llhttp then refuses in a header name: such a request is node:http's).
    if (((bytes[at + i] as number) | 0x20) !== CONTENT_LENGTH[i]) return false;
  }
  return true;
}
