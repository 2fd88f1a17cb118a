import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/**
 * Refusals before any route (docs/relay.md, "HTTP errors"): a path with malformed
 * percent-encoding is 400 `INVALID_REQUEST`; `OPTIONS` is an unknown endpoint (404, the error
 * record) rather than express's automatic 200 `text/plain` answer. Two `Host` headers are refused
 * before, by `createExpressApp` of `@repo/http`.
 */
export function requestChecks(): RequestHandler {
  return function requestChecks(req, _res, next) {
    try {
      decodeURIComponent(req.path);
    } catch {
      next(new AppError('INVALID_REQUEST', { message: 'malformed percent-encoding in the path' }));
      return;
    }
    if (req.method === 'OPTIONS') {
      next(new AppError('NOT_FOUND', { message: `no such endpoint: ${req.method} ${req.path}` }));
      return;
    }
    next();
  };
}
