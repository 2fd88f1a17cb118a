/**
 * JSON-RPC envelopes exactly as Bitcoin Core 29.2 handles them (src/rpc/request.cpp
 * JSONRPCRequest::parse and JSONRPCReplyObj, src/httprpc.cpp), as the recordings in
 * packages/chain-double/fixtures/bitcoind show.
 */

/** `1.0` covers requests without a `jsonrpc` key too (Core's V1_LEGACY). */
export type JsonVersion = '1.0' | '2.0';

/**
 * Core's request state. In a batch it is reused from one element to the next, so a
 * non-object element is answered with the previous element's id and version (the recorded
 * quirk of batch.mixed).
 */
export interface CallState {
  id: { value: unknown } | undefined;
  version: JsonVersion;
}

/** A request-object error (-32600) or parse error (-32700). */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The state before any request was parsed: id null (present), legacy version. */
export function initialState(): CallState {
  return { id: { value: null }, version: '1.0' };
}

/** Parses one request object into `state` (id first, so later errors carry it). Throws EnvelopeError. */
export function parseCall(value: unknown, state: CallState): { method: string; params: unknown[] | Record<string, unknown> } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new EnvelopeError(-32600, 'Invalid Request object');
  const request = value as Record<string, unknown>;
  state.id = Object.prototype.hasOwnProperty.call(request, 'id') ? { value: request.id } : undefined;
  state.version = '1.0';
  const version = request.jsonrpc;
  if (version !== undefined && version !== null) {
    if (typeof version !== 'string') throw new EnvelopeError(-32600, 'jsonrpc field must be a string');
    if (version === '2.0') state.version = '2.0';
    else if (version !== '1.0') throw new EnvelopeError(-32600, 'JSON-RPC version not supported');
  }
  const method = request.method;
  if (method === undefined || method === null) throw new EnvelopeError(-32600, 'Missing method');
  if (typeof method !== 'string') throw new EnvelopeError(-32600, 'Method must be a string');
  const params = request.params;
  if (params === undefined || params === null) return { method, params: [] };
  if (typeof params !== 'object') throw new EnvelopeError(-32600, 'Params must be an array or object');
  return { method, params: params as unknown[] | Record<string, unknown> };
}

/** A JSON-RPC 2.0 request without an id: executed, never answered. */
export function isNotification(state: CallState): boolean {
  return state.id === undefined && state.version === '2.0';
}

function idPart(state: CallState): string {
  return state.id === undefined ? '' : `,"id":${JSON.stringify(state.id.value) ?? 'null'}`;
}

/** Core's JSONRPCReplyObj as an object: `jsonrpc` for 2.0, `error: null` / `result: null` for 1.0, `id` when present. */
export function replyObject(result: unknown, error: { code: number; message: string } | null, state: CallState): Record<string, unknown> {
  const reply: Record<string, unknown> = {};
  if (state.version === '2.0') reply.jsonrpc = '2.0';
  if (error === null) {
    reply.result = result;
    if (state.version === '1.0') reply.error = null;
  } else {
    if (state.version === '1.0') reply.result = null;
    reply.error = error;
  }
  if (state.id !== undefined) reply.id = state.id.value;
  return reply;
}

/** Core's success reply, around the exact JSON text of a result. */
export function successText(resultJson: string, state: CallState): string {
  return state.version === '2.0'
    ? `{"jsonrpc":"2.0","result":${resultJson}${idPart(state)}}`
    : `{"result":${resultJson},"error":null${idPart(state)}}`;
}

/** Core's error reply. */
export function errorText(code: number, message: string, state: CallState): string {
  const error = `{"code":${code},"message":${JSON.stringify(message)}}`;
  return state.version === '2.0'
    ? `{"jsonrpc":"2.0","error":${error}${idPart(state)}}`
    : `{"result":null,"error":${error}${idPart(state)}}`;
}

/** HTTP status of an error answered outside a batch: Core's JSONErrorReply for 1.0, 200 for 2.0. */
export function errorStatus(code: number, state: CallState, envelopeError = false): number {
  if (state.version === '2.0' && !envelopeError) return 200;
  if (code === -32600) return 400;
  if (code === -32601) return 404;
  return 500;
}

/**
 * Splits a JSON array, its text or its UTF-8 bytes (a reply's body as read: not decoded whole
 * first), into the exact texts of its elements (no re-serialization, so Core's number
 * formatting, e.g. `50.00000000`, survives). Returns undefined when it is not an array.
 */
export function splitJsonArray(json: string | Buffer): string[] | undefined {
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  const bounds = jsonArrayElements(bytes);
  if (bounds === undefined) return undefined;
  const parts: string[] = [];
  for (let i = 0; i < bounds.length; i += 2) parts.push(bytes.toString('utf8', bounds[i], bounds[i + 1]));
  return parts;
}

// The classes of JSON_BYTE_CLASS, as module constants (what the scanners here compare with: an
// exported constant is read as a property of `exports` in CommonJS, once a byte).
const OTHER = 0;
const BLANK = 1;
const COLON = 2;
const NUMBER = 3;
const UNPRINTABLE = 4;
const QUOTE = 5;
const OPEN = 6;
const CLOSE = 7;
const COMMA = 8;
const CLASS = new Uint8Array(256).fill(UNPRINTABLE);
for (let c = 0x21; c <= 0x7e; c++) CLASS[c] = OTHER;
for (const c of [0x20, 0x09, 0x0a, 0x0d]) CLASS[c] = BLANK;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = NUMBER;
CLASS[0x2d] = NUMBER;
CLASS[0x3a] = COLON;
CLASS[0x22] = QUOTE;
CLASS[0x5b] = CLASS[0x7b] = OPEN;
CLASS[0x5d] = CLASS[0x7d] = CLOSE;
CLASS[0x2c] = COMMA;

/**
 * What a byte is to a scanner of JSON text outside strings, as {@link JSON_BYTE_CLASS} gives it:
 * one table look-up a byte instead of a chain of comparisons. The classes a scanner steps over
 * without a look come first (below `QUOTE`). A scanner in another module copies what it compares
 * with into constants of its own.
 */
export const JsonByte = {
  /** Printable ASCII not classed below (letters of `true`, `.`, `e`, …). */
  OTHER,
  /** Space, tab, line feed, carriage return. */
  BLANK,
  COLON,
  /** A digit or `-`: a number's first byte. */
  NUMBER,
  /** A control byte other than a blank, DEL, or not ASCII. */
  UNPRINTABLE,
  QUOTE,
  /** `[` or `{`. */
  OPEN,
  /** `]` or `}`. */
  CLOSE,
  COMMA,
} as const;

/** The {@link JsonByte} class of each byte value. */
export const JSON_BYTE_CLASS: Uint8Array = CLASS;

/** Bytes of a string read one by one before the rest is searched natively (a call costs more than a short string's loop). */
const SHORT_STRING = 16;

/** True for JSON's blanks: space, tab, line feed, carriage return. */
function isJsonBlank(c: number): boolean {
  return CLASS[c] === BLANK;
}

/**
 * The index of the quote that closes the JSON string whose opening quote is at `open`
 * (`bytes.length` when it is not closed): its first bytes read one by one, the rest searched
 * natively (`indexOf`), a quote after an odd run of backslashes being part of the string. UTF-8
 * never puts a quote or backslash byte inside a multi-byte character, so a megabyte of hex costs a
 * `memchr`, not a loop.
 */
export function jsonStringEnd(bytes: Uint8Array, open: number): number {
  const n = bytes.length;
  const stop = Math.min(n, open + 1 + SHORT_STRING);
  let i = open + 1;
  for (; i < stop; i++) {
    const c = bytes[i] as number;
    if (c === 0x22) return i;
    if (c === 0x5c) i++;
  }
  if (i >= n) return n;
  // Past the first bytes, not in the middle of an escape (the loop stepped over each one whole).
  for (;;) {
    const quote = bytes.indexOf(0x22, i);
    if (quote < 0) return n;
    let backslashes = 0;
    while (quote - backslashes - 1 >= i && bytes[quote - backslashes - 1] === 0x5c) backslashes++;
    // An escape run that began before `i` ended before it (see above): the run counted is whole.
    if (backslashes % 2 === 0) return quote;
    i = quote + 1;
  }
}

/**
 * {@link splitJsonArray} on the bytes of a JSON array, without decoding them: the elements as
 * flat `[start, end, start, end, …]` offsets into `bytes` (blanks around each left out), or
 * undefined when `bytes` is not an array. UTF-8 never puts a quote, backslash or bracket byte
 * inside a multi-byte character, so the bytes split where the text does.
 */
export function jsonArrayElements(bytes: Uint8Array): number[] | undefined {
  const n = bytes.length;
  let i = 0;
  while (i < n && isJsonBlank(bytes[i] as number)) i++;
  if (bytes[i] !== 0x5b) return undefined;
  const bounds: number[] = [];
  let depth = 0;
  let start = i + 1;
  const push = (from: number, to: number, always: boolean) => {
    while (from < to && isJsonBlank(bytes[from] as number)) from++;
    while (to > from && isJsonBlank(bytes[to - 1] as number)) to--;
    if (always || to > from) bounds.push(from, to);
  };
  for (; i < n; i++) {
    const kind = CLASS[bytes[i] as number] as number;
    if (kind < QUOTE) continue;
    if (kind === QUOTE) i = jsonStringEnd(bytes, i);
    else if (kind === OPEN) depth++;
    else if (kind === CLOSE) {
      depth--;
      if (depth === 0) {
        push(start, i, false);
        return bounds;
      }
    } else if (depth === 1) {
      push(start, i, true);
      start = i + 1;
    }
  }
  return undefined;
}

/** A character that JSON.stringify always escapes, so it cannot occur in an id's text. */
const MARK = '\u0000';

/**
 * Core's success envelope for `state` split around its result: `[before, after]`, `after`
 * ending with Core's newline. Derived from `successText` itself, so both always agree.
 */
export function successParts(state: CallState): [before: string, after: string] {
  const text = successText(MARK, state);
  const at = text.indexOf(MARK);
  return [text.slice(0, at), `${text.slice(at + 1)}\n`];
}

/**
 * The exact bytes of `<R>` in a Core success reply `{"result":<R>,"error":null,"id":<ID>}\n`
 * (1.0 / no version) or `{"jsonrpc":"2.0","result":<R>,"id":<ID>}\n` (2.0) sent for a request
 * of envelope state `state`; undefined when `body` does not have exactly that shape (an error
 * reply ends with `"error":{…},"id":…}`, so it never matches). No parse, no copy.
 */
export function splitSuccessReply(body: Buffer, state: CallState): Buffer | undefined {
  const [before, after] = successParts(state);
  const b = Buffer.from(before, 'utf8');
  const a = Buffer.from(after, 'utf8');
  if (body.length <= b.length + a.length) return undefined;
  if (body.compare(b, 0, b.length, 0, b.length) !== 0) return undefined;
  if (body.compare(a, 0, a.length, body.length - a.length) !== 0) return undefined;
  return body.subarray(b.length, body.length - a.length);
}

/**
 * Core's success envelope for `state` around the exact bytes of a result, in one buffer: the
 * same bytes as `successText(result, state)` and its newline, without a string round trip
 * (a cached block's hex, a result shared between calls).
 */
export function successReply(result: Buffer, state: CallState): Buffer {
  const [before, after] = successParts(state);
  const headLength = before.length; // ASCII: `{"result":` or `{"jsonrpc":"2.0","result":`
  const out = Buffer.allocUnsafe(headLength + result.length + Buffer.byteLength(after));
  out.write(before, 0, 'latin1');
  result.copy(out, headLength);
  out.write(after, headLength + result.length, 'utf8');
  return out;
}
