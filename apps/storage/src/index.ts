export { createApp, createBackend, type StorageApp, type StorageDeps } from './app';
export {
  loadConfig,
  STORAGE_BACKENDS,
  DEFAULT_TTL_SECONDS,
  DEFAULT_MAX_TTL_SECONDS,
  DEFAULT_MAX_BODY_BYTES,
  type StorageConfig,
  type StorageBackendName,
} from './config';
export {
  BackendUnavailableError,
  type DeleteResult,
  type PutResult,
  type StorageBackend,
  type StoredEntry,
  type TouchResult,
  type WriteRefusal,
} from './backends/backend';
export { createSqliteBackend, type SqliteBackendOptions } from './backends/sqlite';
export { createRedisBackend, type RedisBackendOptions } from './backends/redis';
export { createSweeper, type Sweeper, type SweeperOptions } from './sweeper';
export { parseKey, parseValue, parseTtl, parseStoreRequest, parseTouchRequest, type StoreRequest, type TouchRequest } from './validation';
export { createWriteToken, hashWriteToken, parseAuthorization, tokenHashesMatch, WRITE_TOKEN_BYTES, type WriteToken } from './write-token';
export { SERVICE_VERSION } from './routes/health';
