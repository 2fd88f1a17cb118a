export { createApp, type ConfigServerApp, type ConfigServerDeps } from './app';
export { loadConfig, type ConfigServerConfig } from './config';
export { createKeyring, environmentKeyInfo, type Keyring, type EnvironmentKey } from './keyring';
export { loadMasterKey, type MasterKey } from './master-key';
export { API_VERSION, ALGORITHM, ENCRYPTION_TYPE } from './constants';
