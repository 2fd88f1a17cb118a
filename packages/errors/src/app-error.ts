import { DEFAULT_MESSAGE_BY_CODE, HTTP_STATUS_BY_CODE, type ErrorCode } from './codes';

/** Options of {@link AppError}. */
export interface AppErrorOptions {
  /** Human-readable message sent to the client; defaults to the code's message. */
  message?: string;
  /** Extra detail sent to the client (never a secret, never a stack). */
  details?: string;
  /** The original error, kept for the logs. */
  cause?: unknown;
  /** Overrides the code's HTTP status (rarely needed). */
  status?: number;
  /** Extra response headers (for example `Retry-After`). */
  headers?: Record<string, string>;
  /** Whether the body carries `code` (the record allows it to be absent: docs/README.md, "Error record"). */
  exposeCode?: boolean;
}

/** The one error class of every service: a stable `code`, its HTTP status, the `cause` kept. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: string | undefined;
  readonly headers: Record<string, string>;
  readonly exposeCode: boolean;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.message ?? DEFAULT_MESSAGE_BY_CODE[code], { cause: options.cause });
    this.code = code;
    this.status = options.status ?? HTTP_STATUS_BY_CODE[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.exposeCode = options.exposeCode ?? true;
  }
}

/** The error record of the config server and most services (docs/README.md, "Error record"). */
export interface ErrorRecord {
  error: string;
  code?: string;
  details?: string;
}

/** The relay's nested error record (docs/relay.md, "HTTP errors": `{error: {code, message, details}}`). */
export interface NestedErrorRecord {
  error: { code: string; message: string; details?: string };
}

/** Builds the flat error record of `err`. */
export function toErrorRecord(err: AppError): ErrorRecord {
  const record: ErrorRecord = { error: err.message };
  if (err.exposeCode) record.code = err.code;
  if (err.details !== undefined) record.details = err.details;
  return record;
}

/** Builds the nested error record of `err` (relay HTTP). */
export function toNestedErrorRecord(err: AppError): NestedErrorRecord {
  const inner: NestedErrorRecord['error'] = { code: err.code, message: err.message };
  if (err.details !== undefined) inner.details = err.details;
  return { error: inner };
}

/** Status codes that express's body parser and http-errors raise, mapped to our codes. */
const CODE_BY_HTTP_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'INVALID_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'ACCESS_DENIED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * Turns anything thrown into an AppError, keeping it as the cause. Client errors raised by
 * express's body parsers (`status`/`expose` set, for example a malformed JSON body or a body
 * over the limit) keep their status; anything else becomes a generic 500.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // The router's decoding of a path parameter (`%zz`, `%ff%fe`): the client's mistake, not ours.
  if (err instanceof URIError) return new AppError('INVALID_REQUEST', { message: 'malformed percent-encoding in the path', cause: err });
  if (typeof err === 'object' && err !== null) {
    const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; type?: unknown; message?: unknown };
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
    if (status !== undefined && status >= 400 && status < 500 && e.expose === true) {
      const code = CODE_BY_HTTP_STATUS[status] ?? 'INVALID_REQUEST';
      const message =
        e.type === 'entity.parse.failed'
          ? 'malformed JSON body'
          : e.type === 'entity.too.large'
            ? 'request body too large'
            : typeof e.message === 'string'
              ? e.message
              : undefined;
      return new AppError(code, { message, status, cause: err });
    }
  }
  return new AppError('INTERNAL_ERROR', { cause: err });
}
