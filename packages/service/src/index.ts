export { createLogger, createSilentLogger, createMemoryLogger, type Logger, type LoggerOptions, type LogRecord } from './logger';
export { listen, closeGracefully } from './listen';
export { onShutdownSignal, type ShutdownOptions } from './shutdown';
export { runMain } from './run-main';
export { backoff, type BackoffOptions } from './backoff';
export { withDeadline } from './deadline';
export {
  ensurePrivateFile,
  writeSecretFile,
  loadOrCreateSecretFile,
  readOrCreateSecretFile,
  type PrivateFile,
  type SecretFile,
} from './secret-file';
export { assertDatabaseWritable, type SqliteExec } from './sqlite-writable';
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
