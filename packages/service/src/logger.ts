import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Service name, on every line. */
  name: string;
  /** pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. */
  level?: string;
}

/**
 * A structured JSON-lines logger on stdout. Secrets never reach it: keys are logged by
 * fingerprint, and the usual credential fields are redacted in case one slips into a logged object.
 *
 * Lines are gathered and written together ({@link gatheredStdout}): pino's own destination makes
 * one asynchronous write per line, a trip through libuv's thread pool that costs more CPU than
 * the rest of a short request's line.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(pinoOptions(options), gatheredStdout());
}

/** A line waits at most this long for others before it is written (ms). */
export const LOG_GATHER_MS = 10;
/**
 * Gathered lines are written at once past this many bytes. Each hand-over to the asynchronous
 * destination is a write through libuv's pool and its completion: at 64 KB a service logging a
 * line a request pays it once for hundreds of lines, not dozens.
 */
export const LOG_GATHER_BYTES = 64 * 1024;

/**
 * Where a line can be written as bytes, in place: `reserve(size)` makes room for `size` bytes in
 * `buffer` from `length` on; the writer puts the line's UTF-8 bytes there, advances `length`
 * past them and calls `wrote()`. A line so written costs no string, and nothing of it is left on
 * the heap for the garbage collector (the rpc-proxy's request line, one a call:
 * docs/performance/rpc-proxy.md, "Eleventh round").
 */
export interface LineBytes {
  buffer: Buffer;
  length: number;
  reserve(size: number): void;
  wrote(): void;
}

/** What {@link gatheredStdout} hands its bytes to: pino's asynchronous destination (sonic-boom, buffer mode). */
export interface ByteOut {
  write(bytes: Buffer): unknown;
  flushSync(): void;
  on(event: 'drain', listener: () => void): unknown;
}

/**
 * A pino destination on stdout that gathers lines as bytes and hands them to pino's
 * asynchronous destination in one write, {@link LOG_GATHER_MS} after the first or as soon as
 * {@link LOG_GATHER_BYTES} are gathered: a busy service makes one write for hundreds of lines,
 * a quiet one writes each line within 10 ms. On `exit` what is gathered is written synchronously,
 * so a fatal line before `process.exit(1)` is kept. `flush(cb)` calls back once every line handed
 * over is written: an asynchronous write waits for a thread of libuv's pool, and lines written
 * synchronously at `exit` while one still waits would land before it, so a clean stop flushes
 * before it exits ({@link onShutdownSignal}). pino's lines come as strings (`write`); a line
 * built as bytes goes in place ({@link LineBytes}), in the same order.
 */
export function gatheredStdout(): GatheredDestination {
  return gatheredTo(pino.destination({ dest: 1, sync: false, contentMode: 'buffer' }) as unknown as ByteOut);
}

/** {@link gatheredStdout}'s gathering, handing to `out` (tests give their own). */
export function gatheredTo(out: ByteOut): GatheredDestination {
  let timer: NodeJS.Timeout | undefined;
  // Handed to `out` and not yet written (its 'drain' comes once all of it is), and who waits for that.
  let writing = false;
  let waiting: (() => void)[] = [];
  out.on('drain', () => {
    writing = false;
    const callbacks = waiting;
    waiting = [];
    for (const cb of callbacks) cb();
  });
  const hand = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (destination.length === 0) return;
    // The bytes go to `out` as they are (written later, from libuv's pool): a fresh buffer gathers the next.
    const bytes = destination.buffer.subarray(0, destination.length);
    destination.buffer = Buffer.allocUnsafe(LOG_GATHER_BYTES * 2);
    destination.length = 0;
    writing = true;
    out.write(bytes);
  };
  const destination: GatheredDestination = {
    buffer: Buffer.allocUnsafe(LOG_GATHER_BYTES * 2),
    length: 0,
    reserve(size: number) {
      if (destination.buffer.length - destination.length >= size) return;
      hand();
      if (destination.buffer.length < size) destination.buffer = Buffer.allocUnsafe(size);
    },
    wrote() {
      if (destination.length >= LOG_GATHER_BYTES) hand();
      // Not unref'd: a process that ends on its own waits the few ms for its last lines to be
      // handed and written (the 'exit' flush alone lost lines of a burst when the pipe was busy).
      else if (timer === undefined) timer = setTimeout(hand, LOG_GATHER_MS);
    },
    write(line: string) {
      // At most 3 bytes of UTF-8 for each UTF-16 unit.
      destination.reserve(3 * line.length);
      destination.length += destination.buffer.write(line, destination.length);
      destination.wrote();
    },
    flush(cb?: () => void) {
      hand();
      if (cb === undefined) return;
      if (writing) waiting.push(cb);
      else process.nextTick(cb);
    },
    flushSync() {
      hand();
      out.flushSync();
    },
  };
  if (destinations.size === 0) process.once('exit', flushAllAtExit);
  destinations.add(destination);
  return destination;
}

interface GatheredDestination extends LineBytes {
  write(line: string): void;
  /** Hands what is gathered; `cb` once everything handed is written. */
  flush(cb?: () => void): void;
  /** Writes what is gathered and handed at once (at `exit`). */
  flushSync(): void;
}

/** Every destination gatheredStdout made in this process (a service may have several loggers). */
const destinations = new Set<GatheredDestination>();

/** How long a process waits for its last log lines to be written before it goes on (ms). */
export const LOG_DRAIN_MS = 2_000;

/**
 * Calls `then` once every line handed to this process's stdout loggers is written, or after
 * {@link LOG_DRAIN_MS} (a reader that stopped reading must not hold the process): what a process
 * does before it exits, so that its last lines land after the earlier ones ({@link gatheredStdout}).
 */
export function afterLogsWritten(then: () => void): void {
  let left = destinations.size + 1;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    clearTimeout(deadline);
    then();
  };
  const one = () => {
    if (--left === 0) finish();
  };
  const deadline = setTimeout(finish, LOG_DRAIN_MS);
  for (const destination of destinations) destination.flush(one);
  one();
}

/** What each gathered destination writes synchronously on `exit` (one listener for them all). */
function flushAllAtExit(): void {
  for (const destination of destinations) {
    try {
      destination.flushSync();
    } catch {
      // stdout already gone: nothing to keep
    }
  }
}

/**
 * pino's `isoTime` (`,"time":"<ISO 8601>"`) formatted once per millisecond instead of once per
 * line: a busy service writes many lines within one millisecond, and `toISOString` is a
 * quarter of a short line's cost.
 */
export function cachedIsoTime(now: () => number = Date.now): () => string {
  let last = Number.NaN;
  let text = '';
  return () => {
    const t = now();
    if (t !== last) {
      last = t;
      text = `,"time":"${new Date(t).toISOString()}"`;
    }
    return text;
  };
}

/** The options every service logger shares: level, service name, ISO time, redaction. */
function pinoOptions(options: LoggerOptions): pino.LoggerOptions {
  return {
    name: options.name,
    level: options.level ?? 'info',
    base: { service: options.name },
    timestamp: cachedIsoTime(),
    // Explicit paths, no wildcards: pino compiles them into plain property checks, while a
    // wildcard costs more on every line than the rest of a request line.
    redact: {
      paths: [
        'password',
        'authorization',
        'key',
        'secret',
        'token',
        'headers.authorization',
        'req.headers.authorization',
        'config.password',
        'auth.password',
      ],
      censor: '[redacted]',
    },
  };
}

/** A logger that writes nothing, for tests. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** A log line as parsed back from JSON. */
export type LogRecord = Record<string, unknown> & { level: number; msg?: string };

/** A logger that keeps its lines in memory, for tests that assert what was logged. */
export function createMemoryLogger(level = 'debug'): { logger: Logger; lines: LogRecord[] } {
  const lines: LogRecord[] = [];
  const logger = pino(pinoOptions({ name: 'test', level }), { write: (line: string) => void lines.push(JSON.parse(line) as LogRecord) });
  return { logger, lines };
}
