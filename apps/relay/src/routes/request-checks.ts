import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/**
 * Refusals before any route (docs/relay.md, "HTTP errors"): a path with malformed
 * percent-encoding is 400 `INVALID_REQUEST`. Two `Host` headers and `OPTIONS` are refused before,
 * by `createExpressApp` of `@repo/http`.
 */
export function requestChecks(): RequestHandler {
  return function requestChecks(req, _res, next) {
    try {
      decodeURIComponent(req.path);
    } catch {
      next(new AppError('INVALID_REQUEST', { message: 'malformed percent-encoding in the path' }));
      return;
    }
    next();
  };
}
