export { requestLogger } from './request-log';
export {
  createRateLimiter,
  rateLimit,
  rateLimitHeaders,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitDecision,
} from './rate-limit';
export { limitConnectionsPerAddress, type ConnectionCounter, type ConnectionLimitOptions, type ServerLimits } from './connection-limit';
export { guardServer } from './guard-server';
export { hasDuplicateHost, duplicateHostError, refuseDuplicateHost } from './host-header';
export {
  readServerLimits,
  readConnectionCap,
  readDeadlines,
  serverLimitVariables,
  deadlineVariables,
  type ServerLimitDefaults,
  type DeadlineDefaults,
  type DeadlineWording,
} from './server-limits';
export { requestTimeout, overloadGuard } from './timeout';
export { chain } from './chain';
export {
  parseTrustProxy,
  readTrustProxy,
  clientAddress,
  fromTrustedProxy,
  TRUST_NONE,
  type RequestHead,
  type TrustProxy,
} from './trust-proxy';
export { requestId, requestIdOf, newRequestId, assignRequestId, isValidRequestId, REQUEST_ID_HEADER } from './request-id';
export { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, defaultReserve } from './connection-limit';
export { answerOnSocket, answerProtocolErrors, classifyClientError, flatErrorBody, type ProtocolErrorBody } from './protocol-errors';
export {
  jsonBody,
  jsonDepth,
  createBodySlots,
  DEFAULT_MAX_JSON_DEPTH,
  DEFAULT_MAX_CONCURRENT_BODIES,
  type BodySlots,
  type JsonBodyOptions,
} from './json-body';
