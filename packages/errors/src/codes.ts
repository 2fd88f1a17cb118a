/**
 * Machine codes of the error record (`{error, code?, details?}`), one table for every service.
 * The first six are the config server's (docs/config-server.md, "Errors"); the relay's HTTP codes are
 * `INVALID_REQUEST` and `INTERNAL_ERROR` (docs/relay.md, "HTTP errors"); the rest are ours.
 */
export const ERROR_CODES = {
  MISSING_PARAMETER: 'MISSING_PARAMETER',
  INVALID_REQUEST: 'INVALID_REQUEST',
  INVALID_PARAMETER: 'INVALID_PARAMETER',
  ACCESS_DENIED: 'ACCESS_DENIED',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FILE_NOT_FOUND: 'FILE_NOT_FOUND',
  VERSION_NOT_FOUND: 'VERSION_NOT_FOUND',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  HEADERS_TOO_LARGE: 'HEADERS_TOO_LARGE',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  BAD_GATEWAY: 'BAD_GATEWAY',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  CONNECTION_ERROR: 'CONNECTION_ERROR',
} as const;

/** One of the machine codes of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** HTTP status answered for each code. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  MISSING_PARAMETER: 400,
  INVALID_REQUEST: 400,
  INVALID_PARAMETER: 400,
  ACCESS_DENIED: 403,
  UNAUTHORIZED: 401,
  FILE_NOT_FOUND: 404,
  VERSION_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  CONNECTION_ERROR: 502,
};

/** Default human-readable message for each code (docs/README.md, "Error record"). */
export const DEFAULT_MESSAGE_BY_CODE: Readonly<Record<ErrorCode, string>> = {
  MISSING_PARAMETER: 'missing parameter',
  INVALID_REQUEST: 'invalid request',
  INVALID_PARAMETER: 'invalid parameter',
  ACCESS_DENIED: 'access not authorized',
  UNAUTHORIZED: 'authentication required',
  FILE_NOT_FOUND: 'not found',
  VERSION_NOT_FOUND: 'version not found',
  NOT_FOUND: 'not found',
  METHOD_NOT_ALLOWED: 'method not allowed',
  REQUEST_TIMEOUT: 'request timeout',
  CONFLICT: 'conflict',
  PAYLOAD_TOO_LARGE: 'request body too large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported media type',
  RATE_LIMITED: 'too many requests',
  HEADERS_TOO_LARGE: 'request headers too large',
  INTERNAL_ERROR: 'internal server error',
  BAD_GATEWAY: 'bad gateway',
  SERVICE_UNAVAILABLE: 'service temporarily unavailable',
  CONNECTION_ERROR: 'connection error',
};
