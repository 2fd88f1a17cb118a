import { join } from 'node:path';
import { handleCommandLine, loadDotEnvFile } from '@repo/config';
import { createLogger, listen, onShutdownSignal, runMain } from '@repo/service';
import { createApp } from './app';
import { COMMAND } from './command';
import { loadConfig } from './config';

// --help, --version, and exit 2 on an unknown option, before anything is read or opened.
handleCommandLine(COMMAND);

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
