import { join } from 'node:path';
import { ConfigError, closeGracefully, createLogger, listen, loadDotEnvFile, onShutdownSignal } from '@repo/http';
import { createApp } from './app';
import { APP_DIR, loadConfig } from './config';

/** Entry point: the only file with side effects (spec 001: HTTP on port 8000). */
async function main(): Promise<void> {
  loadDotEnvFile(join(APP_DIR, '.env'));
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      createLogger({ name: 'silent-payments' }).fatal(`configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ name: 'silent-payments', level: config.logLevel });
  let service;
  try {
    service = createApp(config, { logger });
  } catch (err) {
    if (err instanceof ConfigError) {
      logger.fatal(`configuration error: ${err.message}`);
      process.exit(1);
    }
    logger.fatal({ err: (err as Error).message }, 'cannot start');
    process.exit(1);
  }
  const address = await listen(service.server, config.port, config.host);
  logger.info({ host: address.address, port: address.port, network: config.network, data_dir: config.dataDir }, 'silent-payments listening');
  service.start();
  const running = service;
  onShutdownSignal({
    logger,
    stop: async () => {
      await closeGracefully(running.server);
      await running.close();
    },
  });
}

void main();
