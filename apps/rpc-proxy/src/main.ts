import { join } from 'node:path';
import { ConfigError, closeGracefully, createLogger, listen, loadDotEnvFile, onShutdownSignal } from '@repo/http';
import { createApp } from './app';
import { loadConfig } from './config';

async function main(): Promise<void> {
  loadDotEnvFile(join(__dirname, '..', '.env'));
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${JSON.stringify({ level: 'fatal', service: 'rpc-proxy', msg: err.message })}\n`);
      process.exit(1);
    }
    throw err;
  }
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
}

void main();
