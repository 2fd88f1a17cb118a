import pino from 'pino';
import type { Logger } from '@repo/service';

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
 * the JSON text itself and hands it to the logger's own destination, the gathered stdout writer of
 * `@repo/service`: the bytes are those `logger.info(fields, 'request')` writes (same prefix, time,
 * bindings, keys in the same order, undefined fields left out, the same string escaping) without
 * pino's per-line machinery (the merging object's key loop, serializer and redaction lookups per
 * key), the proxy's one line per call.
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
  const { prefix, time, chindings, suffix, stream } = fast;
  return (line) => {
    let text = prefix + time() + chindings;
    if (line.method !== undefined) text += ',"method":' + str(line.method);
    text += ',"path":' + str(line.path) + ',"status":' + num(line.status) + ',"rpc":' + str(line.rpc);
    if (line.user !== undefined) text += ',"user":' + str(line.user);
    text += ',"ip":' + str(line.ip) + ',"request_id":' + str(line.request_id) + ',"ms":' + num(line.ms) + suffix;
    stream.write(text);
  };
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
