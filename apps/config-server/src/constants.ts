/** docs/config-server.md, "Versioning": API version 1.0.0. */
export const API_VERSION = '1.0.0';
export const SUPPORTED_VERSIONS = '1.0.0';
export const SERVICE_ID = 'config-server';
export const SERVICE_NAME = 'Encrypted Configuration File Service';

/** docs/config-server.md, "Response headers": the values every response carries. */
export const ENCRYPTION_TYPE = 'quantum-resistant';
export const ALGORITHM = 'X25519-ChaCha20-Poly1305';

/** Headers on every response: the encryption claims and the API version (docs/config-server.md, "Response headers"). */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'X-Encryption-Type': ENCRYPTION_TYPE,
  'X-Algorithm': ALGORITHM,
  'API-Version': API_VERSION,
  'Supported-Versions': SUPPORTED_VERSIONS,
};
