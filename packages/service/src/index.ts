export {
  createLogger,
  createSilentLogger,
  createMemoryLogger,
  gatheredTo,
  type Logger,
  type LoggerOptions,
  type LogRecord,
  type LineBytes,
  type ByteOut,
} from './logger';
export { listen, closeGracefully } from './listen';
export { onShutdownSignal, type ShutdownOptions } from './shutdown';
export { runMain } from './run-main';
export { backoff, type BackoffOptions } from './backoff';
export { throttledLog, type LogWrite, type ThrottleOptions } from './log-throttle';
export { withDeadline } from './deadline';
export { writeSecretFile, loadOrCreateSecretFile, readOrCreateSecretFile, type SecretFile } from './secret-file';
export { ensurePrivateFile, openDatabaseFile, type PrivateFile, type DatabaseHandle, type DatabaseFileOptions } from './database-file';
export {
  loadOrCreateTlsCredentials,
  generateSelfSignedCertificate,
  certificateFingerprint,
  type TlsCredentials,
  type TlsOptions,
} from './tls';
export { runService, closeServers, once, type ServiceApp, type RunServiceOptions, type ListenAddress } from './run-service';
export { watchCertificate, type CertificateWatch, type CertificateWatchOptions, type SecureContextServer } from './tls-reload';
export { openLater, type OpenLater } from './open-later';
