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
 * A structured JSON-lines logger. Secrets never reach it: keys are logged by fingerprint,
 * and the usual credential fields are redacted in case one slips into a logged object.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(pinoOptions(options));
}

/**
 * pino's `isoTime` (`,"time":"<ISO 8601>"`) formatted once per millisecond instead of once per
 * line: a busy service writes many lines within one millisecond, and `toISOString` is a
 * quarter of a short line's cost (measured: 4.4 → 3.4 µs a request line).
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
    // wildcard costs ~5 µs on every line (measured), which is most of a request line's cost.
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
