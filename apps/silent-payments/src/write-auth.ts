import type { RequestHandler } from 'express';
import { createHash } from 'node:crypto';
import { equalBytes } from '@repo/crypto';
import { AppError } from '@repo/errors';

/**
 * With SP_API_TOKEN set, every POST route (`/generate-address` and any later write) requires
 * `Authorization: Bearer <token>` (RFC 6750, section 2.1); reads stay open. Tokens are compared
 * as SHA-256 digests in constant time, so neither the content nor the length of the token leaks
 * through timing. 401 `UNAUTHORIZED` with `WWW-Authenticate: Bearer` otherwise.
 */
export function requireBearerForWrites(token: string | undefined): RequestHandler {
  if (token === undefined) return (_req, _res, next) => next();
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return function requireBearerForWrites(req, _res, next) {
    if (req.method !== 'POST') {
      next();
      return;
    }
    const header = req.headers.authorization ?? '';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const given = createHash('sha256')
      .update(match?.[1] ?? '', 'utf8')
      .digest();
    if (match === null || !equalBytes(given, expected)) {
      next(
        new AppError('UNAUTHORIZED', {
          message: match === null ? 'authentication required' : 'invalid token',
          details: 'send Authorization: Bearer <SP_API_TOKEN>',
          headers: {
            'WWW-Authenticate': match === null ? 'Bearer realm="silent-payments"' : 'Bearer realm="silent-payments", error="invalid_token"',
          },
        }),
      );
      return;
    }
    next();
  };
}
