import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError, toAppError, toErrorRecord, toNestedErrorRecord } from './app-error';
import type { ErrorCode } from './codes';

/** The smallest logger the middleware needs (pino's shape). */
export interface ErrorLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Options of {@link errorHandler}. */
export interface ErrorHandlerOptions {
  /** Where unexpected errors are logged, with their stack. */
  logger?: ErrorLogger;
  /** `flat` is `{error, code, details}`; `nested` is the relay's `{error: {code, message, details}}`. */
  format?: 'flat' | 'nested';
  /** Headers added to every error response (for example the API version). */
  headers?: Record<string, string>;
  /** At most one log line in this many ms for each kind of 503 answered on purpose (default 5,000). */
  unavailableLogIntervalMs?: number;
  /** The clock of that interval (tests). */
  now?: () => number;
}

/** The default of {@link ErrorHandlerOptions.unavailableLogIntervalMs}. */
export const UNAVAILABLE_LOG_INTERVAL_MS = 5_000;

/**
 * The error middleware, registered last: answers the error record of an AppError, logs
 * anything unexpected (with its cause) and answers a generic 500 for it. Never a stack trace.
 *
 * What it logs:
 * - an unexpected error (anything but an AppError of status 503): error level, with its stack;
 * - a 503 answered on purpose (an AppError: overloaded, a backend down, not ready yet): these
 *   come in floods during an outage, so one warn line per kind (its `details`, else its code)
 *   every {@link UNAVAILABLE_LOG_INTERVAL_MS}, with the reason (its message and its cause's, no
 *   stack) and how many went unlogged since the line before; each request keeps its request line;
 * - an error after the answer was sent: a handler still at work when `requestTimeout` answered
 *   408, whose own answer then fails (`ERR_HTTP_HEADERS_SENT`: outcome `completed`, the work was
 *   done) or whose error has nowhere to go (outcome `error` and its code): one warn line, never
 *   express's default handler, which prints the stack on stderr. When the answer had started but
 *   not ended, the connection is cut so the client sees it incomplete.
 */
export function errorHandler(options: ErrorHandlerOptions = {}): ErrorRequestHandler {
  const format = options.format ?? 'flat';
  const logger = options.logger;
  const interval = options.unavailableLogIntervalMs ?? UNAVAILABLE_LOG_INTERVAL_MS;
  const now = options.now ?? Date.now;
  const unavailableSeen = new Map<string, { at: number; unlogged: number }>();

  function logUnavailable(appError: AppError, method: string, path: string): void {
    if (logger === undefined) return;
    const kind = appError.details ?? appError.code;
    const t = now();
    const seen = unavailableSeen.get(kind);
    if (seen !== undefined && t - seen.at < interval) {
      seen.unlogged++;
      return;
    }
    unavailableSeen.set(kind, { at: t, unlogged: 0 });
    const cause = appError.cause;
    logger.warn(
      {
        kind,
        reason: cause instanceof Error ? `${appError.message}: ${cause.message}` : appError.message,
        method,
        path,
        ...(seen !== undefined && { notLoggedSinceLastLine: seen.unlogged }),
      },
      'answering 503: service unavailable',
    );
  }

  return function errorHandler(err, req, res, _next) {
    if (res.headersSent) {
      afterAnswer(logger, err, req, res);
      return;
    }
    const appError = toAppError(err);
    if (appError.status >= 500) {
      if (!isUnavailable(err)) logger?.error({ err: appError.cause ?? appError, method: req.method, path: req.path }, 'request failed');
      else logUnavailable(appError, req.method, req.path);
    }
    res.status(appError.status);
    for (const [name, value] of Object.entries({ ...options.headers, ...appError.headers })) res.setHeader(name, value);
    res.json(format === 'nested' ? toNestedErrorRecord(appError) : toErrorRecord(appError));
  };
}

/** A 503 answered on purpose (an AppError), as opposed to an unexpected failure. */
function isUnavailable(err: unknown): boolean {
  return err instanceof AppError && err.status === 503;
}

/**
 * An error that arrives after the answer was sent (see {@link errorHandler}): one log line, and
 * the connection cut when the answer had started but not ended.
 */
function afterAnswer(logger: ErrorLogger | undefined, err: unknown, req: Request, res: Response): void {
  const appError = toAppError(err);
  const completed = (err as { code?: unknown } | null)?.code === 'ERR_HTTP_HEADERS_SENT';
  if (!completed && !isUnavailable(err) && appError.status >= 500) {
    logger?.error({ err: appError.cause ?? appError, method: req.method, path: req.path }, 'request failed after its answer was sent');
  } else {
    logger?.warn(
      {
        method: req.method,
        path: req.path,
        status: res.statusCode,
        outcome: completed ? 'completed' : 'error',
        ...(!completed && { code: appError.code, reason: appError.message }),
      },
      'request finished after its answer was sent',
    );
  }
  // An answer cut short: end the connection so the client sees it is incomplete.
  if (!res.writableEnded) res.destroy();
}

/**
 * The callback an express app runs when a request leaves its last handler: pass it as the app's
 * `next` (`app(req, res, finalHandler({logger})(req, res))`, see `serveExpress` in `@repo/http`)
 * instead of express's default, which prints the stack of an error on stderr. It matters for a
 * handler still at work when `requestTimeout` answered 408: the timeout takes the request down
 * the error handlers, so the handler's own error (or answer, `ERR_HTTP_HEADERS_SENT`) comes here,
 * past them, and {@link errorHandler} logs it as an error after the answer. A request nobody
 * answered (an app without a 404 handler) gets a 404 record.
 */
export function finalHandler(options: ErrorHandlerOptions = {}): (req: Request, res: Response) => (err?: unknown) => void {
  // The error middleware itself (same options), so both log and answer alike; nothing comes after it.
  const handle = errorHandler(options);
  const end = () => undefined;
  return (req, res) => (err) => {
    if (err !== undefined) handle(err, req, res, end);
    else if (!res.headersSent) handle(new AppError('NOT_FOUND'), req, res, end);
  };
}

/** Answers 404 for any route nobody handled (code `NOT_FOUND` unless told otherwise). */
export function notFoundHandler(options: { message?: string; code?: ErrorCode } = {}): RequestHandler {
  return function notFoundHandler(req, _res, next) {
    next(new AppError(options.code ?? 'NOT_FOUND', { message: options.message ?? `no such endpoint: ${req.method} ${req.path}` }));
  };
}
