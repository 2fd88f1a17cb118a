export { createLogger, createSilentLogger, createMemoryLogger, type Logger, type LoggerOptions, type LogRecord } from './logger';
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
export { listen, closeGracefully } from './listen';
export { onShutdownSignal, type ShutdownOptions } from './shutdown';
export { runMain } from './run-main';
export {
  ConfigError,
  loadDotEnvFile,
  readString,
  readOptional,
  readInt,
  readPort,
  readBool,
  readEnum,
  readList,
  readHex,
  type Env,
} from './env';
export { writeSecretFile, loadOrCreateSecretFile, type SecretFile } from './secret-file';
export {
  loadOrCreateTlsCredentials,
  generateSelfSignedCertificate,
  certificateFingerprint,
  type TlsCredentials,
  type TlsOptions,
} from './tls';
