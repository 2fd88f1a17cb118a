/** Stable codes of {@link ConfigClientError}. */
export const CLIENT_ERROR_CODES = {
  /** The server's certificate is not trusted or does not match the pinned fingerprint. */
  TLS_UNTRUSTED: 'TLS_UNTRUSTED',
  /** The server could not be reached, or the connection failed. */
  NETWORK: 'NETWORK',
  /** The server answered an error status; `status` and `serverError` say which. */
  HTTP_ERROR: 'HTTP_ERROR',
  /** The body does not open with the key: wrong key, or the body was altered. */
  DECRYPT_FAILED: 'DECRYPT_FAILED',
  /** An argument is malformed (key, fingerprint, URL). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
} as const;

export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[keyof typeof CLIENT_ERROR_CODES];

/** The one error the client throws. */
export class ConfigClientError extends Error {
  override readonly name = 'ConfigClientError';
  readonly code: ClientErrorCode;
  /** HTTP status, for `HTTP_ERROR`. */
  readonly status: number | undefined;
  /** The server's error record, for `HTTP_ERROR`. */
  readonly serverError: { error?: string; code?: string; details?: string } | undefined;

  constructor(
    code: ClientErrorCode,
    message: string,
    options: { cause?: unknown; status?: number; serverError?: ConfigClientError['serverError'] } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.serverError = options.serverError;
  }
}
