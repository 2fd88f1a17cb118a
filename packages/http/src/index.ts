export { requestLogger } from './request-log';
export {
  createRateLimiter,
  rateLimit,
  rateLimitHeaders,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitDecision,
} from './rate-limit';
export { limitConnectionsPerAddress, type ConnectionCounter, type ConnectionLimitOptions } from './connection-limit';
export { requestTimeout, overloadGuard } from './timeout';
export { chain } from './chain';
export { parseTrustProxy, readTrustProxy, clientAddress, fromTrustedProxy, TRUST_NONE, type TrustProxy } from './trust-proxy';
export { requestId, requestIdOf, assignRequestId, isValidRequestId, REQUEST_ID_HEADER } from './request-id';
