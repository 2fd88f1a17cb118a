export { createApp, type ConfigServerApp, type ConfigServerDeps } from './app';
export { loadConfig, type ConfigServerConfig } from './config';
export { createKeyring, environmentKeyInfo, type Keyring, type EnvironmentKey } from './keyring';
export { loadKey, readOrCreateKey, masterKeySource, versionKeySource, type KeySource, type ServerKey, type PendingKey } from './keys';
export { API_VERSION, ALGORITHM, ENCRYPTION_TYPE } from './constants';
export {
  createClientKeyRegistry,
  parseClientPublicKeyFile,
  clientKeyFingerprint,
  type ClientKeyRegistry,
  type RegisteredClientKey,
} from './client-keys';
export { ENCRYPTION_MODES, CLIENT_PUBLIC_KEY_HEADER, CLIENT_KEM_HEADER, recipientInfo, parseRecipientHeaders } from './recipient';
export { createVersionStore, type VersionStore } from './versions';
export { createWatchHub, type WatchHub, type WaitOutcome } from './watch';
export { createAuditLog, auditTrail, type AuditLog, type AuditRecord } from './audit';
export { VERSION_HEADER } from './routes/files';
export { parseIfNoneMatch, parseWaitMs } from './file-query';
