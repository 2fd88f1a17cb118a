import type { IncomingMessage, ServerResponse } from 'node:http';

/** Options of {@link documentHandler}. */
export interface DocumentHandlerOptions {
  /** `Content-Type` of the answer (default `application/json; charset=utf-8`). */
  contentType?: string;
  /** `Cache-Control: public, max-age=<s>` (default 300: the document changes only with a release). */
  maxAgeSeconds?: number;
}

/**
 * A request handler (express or plain node) answering an API document (OpenAPI, OpenRPC or
 * AsyncAPI) serialised once: 200 with `Cache-Control` and the JSON content type, to GET and HEAD.
 */
export function documentHandler(
  document: object,
  options: DocumentHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const body = Buffer.from(JSON.stringify(document));
  const contentType = options.contentType ?? 'application/json; charset=utf-8';
  const cacheControl = `public, max-age=${options.maxAgeSeconds ?? 300}`;
  return function apiDocument(req, res) {
    res.statusCode = 200;
    res.setHeader('Content-Type', contentType);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('Content-Length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/** A JSON Schema (2020-12, as OpenAPI 3.1, OpenRPC and AsyncAPI 3 embed it). */
export type JsonSchema = Record<string, unknown>;

/**
 * The flat error record `{error, code?, details?}` (docs/README.md, "Error record"), `code` limited
 * to `codes` when given.
 */
export function errorRecordSchema(codes?: readonly string[]): JsonSchema {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: { type: 'string', description: 'What went wrong, for a person.' },
      code: codes ? { type: 'string', enum: [...codes] } : { type: 'string' },
      details: { type: 'string' },
    },
  };
}

/** The `X-RateLimit-*` headers every rate-limited response carries (docs/README.md, "Limits and refusals"). */
export function rateLimitHeaderObjects(refused: boolean): Record<string, unknown> {
  const integer = { type: 'string', pattern: '^[0-9]+$' };
  const headers: Record<string, unknown> = {
    'X-RateLimit-Limit': { description: 'Requests allowed per minute for this address.', schema: integer },
    'X-RateLimit-Remaining': { description: 'Requests left in the current minute.', schema: integer },
    'X-RateLimit-Reset': { description: 'When the current window ends (Unix seconds).', schema: integer },
  };
  if (refused) {
    headers['Retry-After'] = { description: 'Seconds to wait before retrying.', required: true, schema: integer };
    headers['X-RateLimit-Retry-After'] = { description: 'The same as Retry-After.', schema: integer };
  }
  return headers;
}
