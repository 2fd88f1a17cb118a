import { join } from 'node:path';
import { loadDotEnvFile } from '@repo/config';
import { closeGracefully, createLogger, listen, onShutdownSignal, runMain } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';

runMain('rpc-proxy', async () => {
  loadDotEnvFile(join(__dirname, '..', '.env'));
  const config = loadConfig();
  const logger = createLogger({ name: 'rpc-proxy', level: config.logLevel });
  const app = createApp(config, { logger });
  const address = await listen(app.server, config.port, config.host);
  logger.info({ host: address.address, port: address.port, node: config.nodeUrl.origin }, 'rpc-proxy listening');
  onShutdownSignal({
    logger,
    stop: async () => {
      await closeGracefully(app.server);
      await app.close();
    },
  });
});
