/**
 * Codes of the WebSocket `error` message (`data.code`), each with what it means; the connection
 * stays open after any of them (docs/relay.md, "WebSocket errors").
 */
export const ERROR_CODES = {
  /** Bad JSON, a missing or mistyped envelope field, an unknown type, a field of an event missing or mistyped, a message this connection may not send. */
  INVALID_MESSAGE: 'INVALID_MESSAGE',
  /** A peer relay became unreachable (sent to every client). */
  CONNECTION_ERROR: 'CONNECTION_ERROR',
  /** `subscribe` with a `since` the log no longer (or never) held; `data.oldest_id` / `data.oldest_timestamp` give the oldest point available. */
  REPLAY_UNAVAILABLE: 'REPLAY_UNAVAILABLE',
  /** `subscribe` named payment events and the connection's token lacks the `payments` scope. */
  FORBIDDEN: 'FORBIDDEN',
  /** The connection or its address sent more messages a second than the relay reads; those past it are dropped unread. */
  RATE_LIMITED: 'RATE_LIMITED',
} as const;
/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** A message refused by the parser or the validation: what to tell the sender. */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
  /** `data.code` of the error message to answer. */
  readonly code: ErrorCode;
  /** The id of the offending message when it had a usable one. */
  readonly requestId: string | undefined;
  readonly details: string;
  /** Extra fields of the error's data (REPLAY_UNAVAILABLE: the oldest available point). */
  readonly extra: Record<string, unknown>;

  constructor(
    message: string,
    details: string,
    requestId?: string,
    code: ErrorCode = 'INVALID_MESSAGE',
    extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.details = details;
    this.requestId = requestId;
    this.code = code;
    this.extra = extra;
  }
}
