import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/** True when the request carries more than one `Host` header (RFC 9112 3.2: answered 400). */
export function hasDuplicateHost(req: Pick<IncomingMessage, 'rawHeaders'>): boolean {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host' && ++hosts > 1) return true;
  return false;
}

/**
 * Refusals before any route (docs/relay.md, "HTTP errors"): two `Host` headers and a path with
 * malformed percent-encoding are 400 `INVALID_REQUEST`; `OPTIONS` is an unknown endpoint (404,
 * the error record) rather than express's automatic 200 `text/plain` answer.
 */
export function requestChecks(): RequestHandler {
  return function requestChecks(req, _res, next) {
    if (hasDuplicateHost(req)) {
      next(new AppError('INVALID_REQUEST', { message: 'more than one Host header', details: 'RFC 9112 section 3.2' }));
      return;
    }
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
