import { join } from 'node:path';
import { loadDotEnvFile } from '@repo/config';
import { closeGracefully, createLogger, listen, onShutdownSignal, runMain } from '@repo/service';
import { createApp } from './app';
import { APP_DIR, loadConfig } from './config';

/** Entry point: the only file with side effects (docs/silent-payments.md: HTTP on port 8000). */
runMain('silent-payments', async () => {
  loadDotEnvFile(join(APP_DIR, '.env'));
  const config = loadConfig();
  const logger = createLogger({ name: 'silent-payments', level: config.logLevel });
  const service = createApp(config, { logger });
  const address = await listen(service.server, config.port, config.host);
  logger.info(
    { host: address.address, port: address.port, network: config.network, data_dir: config.dataDir },
    'silent-payments listening',
  );
  service.start();
  onShutdownSignal({
    logger,
    stop: async () => {
      await closeGracefully(service.server);
      await service.close();
    },
  });
});
