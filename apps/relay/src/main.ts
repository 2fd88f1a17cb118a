import { join } from 'node:path';
import { ConfigError, createLogger, listen, loadDotEnvFile, onShutdownSignal } from '@repo/http';
import { createApp } from './app';
import { loadConfig } from './config';

async function main(): Promise<void> {
  loadDotEnvFile(join(__dirname, '..', '.env'));
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      createLogger({ name: 'relay' }).error(`configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ name: 'relay', level: config.logLevel });
  let relayApp;
  try {
    relayApp = await createApp(config, { logger });
  } catch (err) {
    if (err instanceof ConfigError) {
      logger.error(`configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const ws = await listen(relayApp.wsServer, config.wsPort, config.host);
  const http = await listen(relayApp.httpServer, config.httpPort, config.host);
  relayApp.start();
  logger.info(
    { relay_id: relayApp.relay.relayId, ws: `${relayApp.wsScheme}://${config.host}:${ws.port}`, http: `http://${config.host}:${http.port}`, peers: config.peers },
    'relay listening',
  );
  onShutdownSignal({ logger, stop: () => relayApp.close() });
}

void main();
