import { join } from 'node:path';
import { loadDotEnvFile } from '@repo/config';
import { createLogger, listen, onShutdownSignal, runMain } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';

runMain('relay', async () => {
  loadDotEnvFile(join(__dirname, '..', '.env'));
  const config = loadConfig();
  const logger = createLogger({ name: 'relay', level: config.logLevel });
  const relayApp = await createApp(config, { logger });
  const ws = await listen(relayApp.wsServer, config.wsPort, config.host);
  const http = await listen(relayApp.httpServer, config.httpPort, config.host);
  relayApp.start();
  logger.info(
    {
      relay_id: relayApp.relay.relayId,
      ws: `${relayApp.wsScheme}://${config.host}:${ws.port}`,
      http: `http://${config.host}:${http.port}`,
      peers: config.peers,
    },
    'relay listening',
  );
  onShutdownSignal({ logger, stop: () => relayApp.close() });
});
