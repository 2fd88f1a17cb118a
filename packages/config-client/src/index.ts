export {
  createConfigClient,
  CLIENT_VERSION,
  API_VERSION,
  RECIPIENT_MODES,
  recipientInfo,
  type ConfigClient,
  type ConfigClientOptions,
  type FetchedFile,
  type FileKey,
  type FetchOptions,
  type ConditionalFetchOptions,
  type WatchOptions,
} from './client';
export {
  generateClientKey,
  parseClientPrivateKey,
  formatClientPrivateKey,
  formatClientPublicKey,
  parseKemName,
  clientSuite,
  type ClientKeyPair,
} from './client-key';
export { ConfigClientError, CLIENT_ERROR_CODES, type ClientErrorCode } from './errors';
export { normaliseFingerprint, type TrustOptions } from './transport';
export { parseKeyValueLines, type KeyValueLines } from './env-lines';
