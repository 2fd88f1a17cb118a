import { resolve } from 'node:path';
import { ConfigError, createLogger, listen, loadDotEnvFile, onShutdownSignal } from '@repo/http';
import { createApp } from './app';
import { loadConfig } from './config';

/** Entry point: reads the settings, opens the backend, listens, stops on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  loadDotEnvFile(resolve(__dirname, '..', '.env'));
  const bootLogger = createLogger({ name: 'storage' });
  let config;
  try {
    config = loadConfig(process.env, process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    bootLogger.fatal(`configuration error: ${err.message}`);
    process.exit(1);
  }
  const logger = createLogger({ name: 'storage', level: config.logLevel });
  const service = await createApp(config, { logger });
  onShutdownSignal({ logger, stop: () => service.close() });
  const address = await listen(service.server, config.port, config.host);
  logger.info(
    { host: address.address, port: address.port, backend: config.backend, permanent: config.permanent, dataDir: config.dataDir },
    'storage listening',
  );
}

main().catch((err: unknown) => {
  // A backend that cannot be opened (Redis unreachable, unwritable DATA_DIR): one line, exit 1.
  createLogger({ name: 'storage' }).fatal({ err: { message: (err as Error).message } }, 'cannot start');
  process.exit(1);
});
