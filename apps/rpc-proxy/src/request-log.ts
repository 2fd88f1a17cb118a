import pino from 'pino';
import type { LineBytes, Logger } from '@repo/service';

/** The fields of the request line (docs/README.md, "Logging"), in the order they are written. */
export interface RequestLine {
  method: string | undefined;
  path: string;
  status: number;
  rpc: string;
  user: string | undefined;
  ip: string;
  request_id: string;
  ms: number;
}

const FIELDS = ['method', 'path', 'status', 'rpc', 'user', 'ip', 'request_id', 'ms'] as const;

/** The pino internals the line is built from (public through `pino.symbols`). */
interface PinoInternals {
  [key: symbol]: unknown;
}

/**
 * A writer of the request line (`msg` "request", level info; docs/README.md, "Logging") that builds
 * the line itself and hands it to the logger's own destination: the bytes are those
 * `logger.info(fields, 'request')` writes (same prefix, time, bindings, keys in the same order,
 * undefined fields left out, the same string escaping) without pino's per-line machinery (the
 * merging object's key loop, serializer and redaction lookups per key), the proxy's one line per
 * call. Into the gathered stdout destination of `@repo/service` the line goes as bytes, in place
 * ({@link LineBytes}: no string made, nothing left for the garbage collector); into any other
 * destination as a string.
 *
 * Returns a writer that falls back to `logger.info` when the logger has anything that would
 * change the line (a log formatter, a mixin, a write or log-method hook, a nested key, a message prefix,
 * serializers or redaction on one of these fields, a destination that wants metadata, another
 * pino than this one): then the line is pino's own.
 */
export function requestLineWriter(logger: Logger): (line: RequestLine) => void {
  const viaPino = (line: RequestLine) => logger.info(line, 'request');
  const fast = fastPath(logger);
  if (fast === undefined) return viaPino;
  const { time, stream } = fast;
  const prefix = Buffer.from(fast.prefix, 'utf8');
  const chindings = Buffer.from(fast.chindings, 'utf8');
  const suffix = Buffer.from(fast.suffix, 'utf8');
  const out = isLineBytes(stream) ? stream : stringSink(stream);
  let timeText = '';
  let timeBytes = Buffer.alloc(0);
  return (line) => {
    const t = time();
    if (t !== timeText) {
      timeText = t;
      timeBytes = Buffer.from(t, 'utf8');
    }
    // Room for the longest this line can be: each string escaped (at most 6 bytes a UTF-16 unit) and quoted, each number.
    const strings =
      line.path.length + line.rpc.length + line.ip.length + line.request_id.length + (line.method?.length ?? 0) + (line.user?.length ?? 0);
    out.reserve(FIXED_BYTES + prefix.length + timeBytes.length + chindings.length + suffix.length + 6 * strings + 12);
    const b = out.buffer;
    let o = put(b, out.length, prefix);
    o = put(b, o, timeBytes);
    o = put(b, o, chindings);
    if (line.method !== undefined) o = putString(b, put(b, o, K_METHOD), line.method);
    o = putString(b, put(b, o, K_PATH), line.path);
    o = putNumber(b, put(b, o, K_STATUS), line.status);
    o = putString(b, put(b, o, K_RPC), line.rpc);
    if (line.user !== undefined) o = putString(b, put(b, o, K_USER), line.user);
    o = putString(b, put(b, o, K_IP), line.ip);
    o = putString(b, put(b, o, K_REQUEST_ID), line.request_id);
    o = putNumber(b, put(b, o, K_MS), line.ms);
    out.length = put(b, o, suffix);
    out.wrote();
  };
}

const K_METHOD = ascii(',"method":');
const K_PATH = ascii(',"path":');
const K_STATUS = ascii(',"status":');
const K_RPC = ascii(',"rpc":');
const K_USER = ascii(',"user":');
const K_IP = ascii(',"ip":');
const K_REQUEST_ID = ascii(',"request_id":');
const K_MS = ascii(',"ms":');
/** The keys, and a number's longest text (24 bytes) twice. */
const FIXED_BYTES = [K_METHOD, K_PATH, K_STATUS, K_RPC, K_USER, K_IP, K_REQUEST_ID, K_MS].reduce((n, k) => n + k.length, 0) + 48;

function ascii(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}

function isLineBytes(stream: { write(s: string): unknown }): stream is { write(s: string): unknown } & LineBytes {
  const s = stream as Partial<LineBytes>;
  return Buffer.isBuffer(s.buffer) && typeof s.length === 'number' && typeof s.reserve === 'function' && typeof s.wrote === 'function';
}

/** A {@link LineBytes} in front of a destination that takes strings: each line is built in a buffer of its own, then written as one string. */
function stringSink(stream: { write(s: string): unknown }): LineBytes {
  const sink: LineBytes = {
    buffer: Buffer.allocUnsafe(1024),
    length: 0,
    reserve(size) {
      if (sink.buffer.length < size) sink.buffer = Buffer.allocUnsafe(size);
    },
    wrote() {
      const text = sink.buffer.toString('utf8', 0, sink.length);
      sink.length = 0;
      stream.write(text);
    },
  };
  return sink;
}

/** Copies `bytes` into `b` at `at`; returns where they end. */
function put(b: Buffer, at: number, bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) b[at + i] = bytes[i] as number;
  return at + bytes.length;
}

/**
 * Writes `value` at `at` as {@link str} writes it, as UTF-8; returns where it ends. Printable
 * ASCII with nothing to escape (every field of the usual line) is copied byte by byte, anything
 * else goes through {@link str}.
 */
function putString(b: Buffer, at: number, value: string): number {
  b[at] = 0x22;
  let o = at + 1;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return at + b.write(str(value), at);
    b[o++] = c;
  }
  b[o] = 0x22;
  return o + 1;
}

/**
 * Writes a number as {@link num} does; returns where it ends. A whole number or one of hundredths
 * (the line's status and `ms`) below 10^12 is written digit by digit: for those the text is the
 * digits and up to two decimals without trailing zeros, what `String` gives.
 */
function putNumber(b: Buffer, at: number, value: number): number {
  const hundredths = Math.round(value * 100);
  if (!(hundredths >= 0 && hundredths < 1e14 && hundredths / 100 === value)) return at + b.write(num(value), at, 'latin1');
  let o = putDigits(b, at, Math.floor(hundredths / 100));
  const cents = hundredths % 100;
  if (cents === 0) return o;
  b[o++] = 0x2e;
  b[o++] = 0x30 + Math.floor(cents / 10);
  if (cents % 10 !== 0) b[o++] = 0x30 + (cents % 10);
  return o;
}

/** Writes a whole number ≥ 0 in decimal; returns where it ends. */
function putDigits(b: Buffer, at: number, whole: number): number {
  let digits = 1;
  for (let n = whole; n >= 10; n = Math.floor(n / 10)) digits++;
  let n = whole;
  for (let i = at + digits - 1; i >= at; i--) {
    b[i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return at + digits;
}

/** Whether {@link requestLineWriter} builds the line itself for this logger (false: through `logger.info`). */
export function buildsLineItself(logger: Logger): boolean {
  return fastPath(logger) !== undefined;
}

/** What the hand-built line needs from the logger, or undefined when it must go through pino. */
function fastPath(
  logger: Logger,
): { prefix: string; time: () => string; chindings: string; suffix: string; stream: { write(s: string): unknown } } | undefined {
  const s = pino.symbols;
  const l = logger as unknown as PinoInternals;
  const formatters = l[s.formattersSym] as { log?: unknown } | undefined;
  const stringifiers = l[s.stringifiersSym] as Record<string | symbol, unknown> | undefined;
  const serializers = l[s.serializersSym] as Record<string, unknown> | undefined;
  const hooks = l[s.hooksSym] as { streamWrite?: unknown; logMethod?: unknown } | undefined;
  const stream = l[s.streamSym] as { write?: unknown; [key: symbol]: unknown } | undefined;
  const lsCache = l[s.lsCacheSym] as Record<number, string> | undefined;
  const time = l[s.timeSym];
  const chindings = l[s.chindingsSym];
  const end = l[s.endSym];
  const messageKey = l[s.messageKeySym];
  const info = logger.levels.values.info;
  // Not in pino's type declarations, but in its `symbols` (pino 8.14 and later).
  const msgPrefix = (s as unknown as Record<string, symbol | undefined>).msgPrefixSym;
  if (
    formatters === undefined ||
    formatters.log !== undefined ||
    stringifiers === undefined ||
    stringifiers[s.wildcardFirstSym] !== undefined ||
    serializers === undefined ||
    hooks === undefined ||
    hooks.streamWrite !== undefined ||
    l[s.mixinSym] !== undefined ||
    hooks.logMethod !== undefined ||
    (l[s.nestedKeySym] !== undefined && l[s.nestedKeySym] !== null) ||
    msgPrefix === undefined ||
    l[msgPrefix] !== undefined ||
    stream === undefined ||
    typeof stream.write !== 'function' ||
    stream[s.needsMetadataGsym] === true ||
    lsCache === undefined ||
    info === undefined ||
    typeof lsCache[info] !== 'string' ||
    typeof time !== 'function' ||
    typeof chindings !== 'string' ||
    typeof end !== 'string' ||
    typeof messageKey !== 'string' ||
    serializers.msg !== undefined ||
    stringifiers[messageKey] !== undefined
  ) {
    return undefined;
  }
  for (const key of FIELDS) if (serializers[key] !== undefined || stringifiers[key] !== undefined) return undefined;
  return {
    prefix: lsCache[info],
    time: time as () => string,
    chindings,
    suffix: `,${str(messageKey)}:${str('request')}${end}`,
    stream: stream as { write(s: string): unknown },
  };
}

/**
 * A string as JSON, as pino writes it: as it is between quotes when nothing in it needs escaping
 * (no control character, quote, backslash or lone surrogate half; the usual case for every field
 * of this line), else `JSON.stringify`. The one difference from pino: a string of up to 100
 * characters with a lone surrogate half, which pino writes raw (not valid UTF-8 once encoded),
 * is escaped here as `JSON.stringify` escapes it.
 */
export function str(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/** A number as pino writes it (null when not finite). */
function num(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
