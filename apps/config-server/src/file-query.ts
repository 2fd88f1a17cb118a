import type { Request } from 'express';
import { FILE_VERSION_RE } from '@repo/crypto';
import { AppError } from '@repo/errors';

/** What the query string of `GET /<env>/<file>` asks for. */
export interface FileQuery {
  version: string | undefined;
  /** 0: answer at once. */
  waitMs: number;
}

/** Reads `?version=` and `?wait=`; other parameters are ignored. Throws 400 for malformed values. */
export function parseFileQuery(req: Request, maxWaitSeconds: number): FileQuery {
  const query = req.query as Record<string, unknown>;
  let version: string | undefined;
  if (query.version !== undefined) {
    if (typeof query.version !== 'string' || !FILE_VERSION_RE.test(query.version)) {
      throw new AppError('INVALID_PARAMETER', {
        message: 'invalid parameter: version',
        details: 'a version as X-Config-Version gives it: 22 characters of base64url',
      });
    }
    version = query.version;
  }
  const waitMs = parseWaitMs(query.wait, maxWaitSeconds);
  if (waitMs === undefined) {
    throw new AppError('INVALID_PARAMETER', {
      message: 'invalid parameter: wait',
      details: `seconds, 0 to ${maxWaitSeconds} (at most 3 decimals)`,
    });
  }
  if (waitMs > 0 && version !== undefined) {
    throw new AppError('INVALID_PARAMETER', {
      message: 'invalid parameter: wait',
      details: 'a pinned version never changes: wait and version do not go together',
    });
  }
  return { version, waitMs };
}

/** `?wait=` in ms (0 when absent), or undefined when it is not 0 to `maxSeconds` seconds. */
export function parseWaitMs(raw: unknown, maxSeconds: number): number | undefined {
  if (raw === undefined) return 0;
  if (typeof raw !== 'string' || !/^\d{1,6}(\.\d{1,3})?$/.test(raw)) return undefined;
  const seconds = Number(raw);
  if (seconds > maxSeconds) return undefined;
  return Math.round(seconds * 1000);
}

/**
 * `If-None-Match` (RFC 9110, section 13.1.2): `*`, or the entity tags listed (weak comparison:
 * `W/"x"` matches `"x"`), or undefined when absent. Unquoted values are taken as given, for clients
 * that send the bare version.
 */
export function parseIfNoneMatch(header: string | undefined): '*' | string[] | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (text === '*') return '*';
  return text
    .split(',')
    .map((tag) =>
      tag
        .trim()
        .replace(/^W\//, '')
        .replace(/^"(.*)"$/, '$1'),
    )
    .filter((tag) => tag !== '');
}
