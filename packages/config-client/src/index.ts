export { createConfigClient, CLIENT_VERSION, API_VERSION, type ConfigClient, type ConfigClientOptions, type FetchedFile } from './client';
export { ConfigClientError, CLIENT_ERROR_CODES, type ClientErrorCode } from './errors';
export { normaliseFingerprint, type TrustOptions } from './transport';
