import { resolve } from 'node:path';
import { loadDotEnvFile } from '@repo/config';
import { createLogger, listen, onShutdownSignal, runMain } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';

/**
 * Entry point: reads the settings (and the `--permanent` flag), opens the backend, listens, stops
 * on SIGINT/SIGTERM. A backend that cannot be opened (Redis unreachable, unwritable DATA_DIR) is
 * one fatal line and exit 1.
 */
runMain('storage', async () => {
  loadDotEnvFile(resolve(__dirname, '..', '.env'));
  const config = loadConfig(process.env, process.argv.slice(2));
  const logger = createLogger({ name: 'storage', level: config.logLevel });
  const service = await createApp(config, { logger });
  onShutdownSignal({ logger, stop: () => service.close() });
  const address = await listen(service.server, config.port, config.host);
  logger.info(
    { host: address.address, port: address.port, backend: config.backend, permanent: config.permanent, dataDir: config.dataDir },
    'storage listening',
  );
});
