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

/** `{ 'application/json': { schema } }`: the content of a JSON response or request body. */
export function jsonContent(schema: JsonSchema): Record<string, { schema: JsonSchema }> {
  return { 'application/json': { schema } };
}

/** A response object with the flat error record, `code` limited to `codes`, and optional headers. */
export function errorResponse(description: string, codes: readonly string[], headers?: Record<string, unknown>): Record<string, unknown> {
  return { description, ...(headers ? { headers } : {}), content: jsonContent(errorRecordSchema(codes)) };
}

/**
 * The refusals of the shared guards of `@repo/http` (docs/README.md, "Limits and refusals"), by
 * status: 408 `REQUEST_TIMEOUT`, 429 `RATE_LIMITED` (when `rateLimited`), 500 `INTERNAL_ERROR`,
 * 503 `SERVICE_UNAVAILABLE` (overload, or a `dependency` that does not answer).
 */
export function guardResponses(options: { rateLimited: boolean; dependency?: string }): Record<string, unknown> {
  const out: Record<string, unknown> = {
    '408': errorResponse('Not answered within the request timeout (`REQUEST_TIMEOUT_MS`).', ['REQUEST_TIMEOUT']),
    '500': errorResponse('Anything unexpected (logged with its cause; never a stack trace).', ['INTERNAL_ERROR']),
    '503': errorResponse(
      `More requests in progress than \`MAX_IN_FLIGHT\` (details \`overloaded\`)${options.dependency ? `, or ${options.dependency}` : ''}.`,
      ['SERVICE_UNAVAILABLE'],
    ),
  };
  if (options.rateLimited) {
    out['429'] = errorResponse('Over the per-address rate limit.', ['RATE_LIMITED'], rateLimitHeaderObjects(true));
  }
  return out;
}

/** Adds `headers` (optional ones, such as the `X-RateLimit-*` set) to every response of `responses` that lacks them. */
export function withHeaders(responses: Record<string, unknown>, headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(responses)) {
    const r = response as { headers?: Record<string, unknown> };
    out[status] = { ...r, headers: { ...headers, ...(r.headers ?? {}) } };
  }
  return out;
}

/** The operation answering an API document itself (`GET /openapi.json` and the like). */
export function documentOperation(operationId: string, kind: 'OpenAPI 3.1' | 'OpenRPC' | 'AsyncAPI 3'): Record<string, unknown> {
  return {
    operationId,
    summary: `This ${kind} document`,
    description: 'Not rate-limited. Cached by clients for 300 s.',
    security: [],
    responses: {
      '200': {
        description: `The ${kind} document.`,
        headers: { 'Cache-Control': { required: true, schema: { type: 'string', const: 'public, max-age=300' } } },
        content: jsonContent({ type: 'object' }),
      },
    },
  };
}

/**
 * The event a server emits for each answer it writes without node:http's request and response
 * objects (the rpc-proxy's front end reads some requests itself), so that a contract recorder
 * attached to the server checks those answers too: `server.emit(ANSWERED_EVENT, answer)` with an
 * {@link AnsweredExchange}, emitted only while something listens.
 */
export const ANSWERED_EVENT = 'api-contract:answered';

/** One request and its answer, as a contract recorder checks them. */
export interface RecordedExchange {
  method: string;
  /** The path without the query. */
  path: string;
  requestBody: Buffer;
  status: number;
  /** Header names in lower case; a repeated header's values joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
  /** False when the connection closed before the response finished (its body is then partial). */
  complete: boolean;
}

/** What {@link ANSWERED_EVENT} carries: the exchange, its headers as the head written (status line, header lines). */
export type AnsweredExchange = Omit<RecordedExchange, 'headers'> & { head: string };
