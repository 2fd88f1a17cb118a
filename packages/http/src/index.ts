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
