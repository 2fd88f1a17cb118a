import type { ErrorRequestHandler, RequestHandler } from 'express';
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
}

/**
 * The error middleware, registered last: answers the error record of an AppError, logs
 * anything unexpected (with its cause) and answers a generic 500 for it. Never a stack trace.
 */
export function errorHandler(options: ErrorHandlerOptions = {}): ErrorRequestHandler {
  const format = options.format ?? 'flat';
  return function errorHandler(err, req, res, next) {
    const appError = toAppError(err);
    if (appError.status >= 500) {
      options.logger?.error({ err: appError.cause ?? appError, method: req.method, path: req.path }, 'request failed');
    }
    if (res.headersSent) {
      // Too late for an error record: cut the response so the client sees it is incomplete.
      next(err);
      return;
    }
    res.status(appError.status);
    for (const [name, value] of Object.entries({ ...options.headers, ...appError.headers })) res.setHeader(name, value);
    res.json(format === 'nested' ? toNestedErrorRecord(appError) : toErrorRecord(appError));
  };
}

/** Answers 404 for any route nobody handled (code `NOT_FOUND` unless told otherwise). */
export function notFoundHandler(options: { message?: string; code?: ErrorCode } = {}): RequestHandler {
  return function notFoundHandler(req, _res, next) {
    next(new AppError(options.code ?? 'NOT_FOUND', { message: options.message ?? `no such endpoint: ${req.method} ${req.path}` }));
  };
}
