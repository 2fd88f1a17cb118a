import { resolve } from 'node:path';
import { loadDotEnvFile } from '@repo/config';
import { createLogger, listen, loadOrCreateTlsCredentials, onShutdownSignal, runMain } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';
import { createKeyring } from './keyring';
import { loadMasterKey } from './master-key';
import { loadVersionKey } from './version-key';

runMain('config-server', async () => {
  loadDotEnvFile(resolve(__dirname, '..', '.env'));
  const config = loadConfig();
  const logger = createLogger({ name: 'config-server', level: config.logLevel });

  const master = loadMasterKey(config);
  logger.info({ source: master.source, path: master.path, fingerprint: master.fingerprint }, 'master key loaded');
  if (master.exposed) logger.warn({ path: master.path }, 'master key file is readable by others: chmod 600 it');

  const version = loadVersionKey(config);
  logger.info({ source: version.source, path: version.path, fingerprint: version.fingerprint }, 'version key loaded');
  if (version.exposed) logger.warn({ path: version.path }, 'version key file is readable by others: chmod 600 it');
  logger.info(
    { file: config.auditLogFile, maxBytes: config.auditLogMaxBytes, keep: config.auditLogKeep, historyPerFile: config.versionHistoryMax },
    'audit log and version history',
  );

  const tls = await loadOrCreateTlsCredentials({
    certFile: config.tlsCertFile,
    keyFile: config.tlsKeyFile,
    dataDir: config.dataDir,
  });
  logger.info({ source: tls.source, sha256: tls.fingerprint }, 'TLS certificate loaded (pin this fingerprint in clients)');

  const keyring = createKeyring({ keysDir: config.keysDir, masterKey: master.key });
  const service = createApp(config, { logger, keyring, tls, versionKey: version.key });
  const address = await listen(service.server, config.port, config.host);
  logger.info(
    {
      url: `https://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`,
      storage: config.storageDir,
    },
    'config server listening',
  );

  onShutdownSignal({ logger, stop: () => service.close() });
});
