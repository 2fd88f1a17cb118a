import type { IncomingMessage } from 'node:http';
import { AppError } from '@repo/errors';
import type { RequestHandler } from 'express';

/**
 * Whether a request carries more than one `Host` field. RFC 9112, section 3.2: a server must
 * answer 400 to a request with more than one, since two hops may each believe a different one
 * (Node keeps the first and drops the rest silently).
 */
export function hasDuplicateHost(req: Pick<IncomingMessage, 'rawHeaders'>): boolean {
  let seen = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host' && ++seen > 1) return true;
  }
  return false;
}

/** The error a request with more than one `Host` field gets: 400 `INVALID_REQUEST`. */
export function duplicateHostError(): AppError {
  return new AppError('INVALID_REQUEST', { message: 'more than one Host header (RFC 9112, section 3.2)' });
}

/** Express middleware: 400 `INVALID_REQUEST` for a request with more than one `Host` field. */
export function refuseDuplicateHost(): RequestHandler {
  return function refuseDuplicateHost(req, _res, next) {
    next(hasDuplicateHost(req) ? duplicateHostError() : undefined);
  };
}
