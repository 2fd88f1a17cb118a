import { join } from 'node:path';
import { handleCommandLine } from '@repo/config';
import { runService, type ListenAddress } from '@repo/service';
import { createApp, type ConfigServerServers } from './app';
import { COMMAND } from './command';
import { loadConfig } from './config';

// --help, --version, and exit 2 on an unknown option, before anything is read or opened.
handleCommandLine(COMMAND);

runService({
  name: 'config-server',
  envFile: join(__dirname, '..', '.env'),
  loadConfig,
  createApp,
  // HTTPS_ALT_PORT, when set: the second listener, which createApp built (README, "A second port for `fetch` and browsers").
  listen: (config) => {
    const addresses: Partial<Record<keyof ConfigServerServers, ListenAddress>> = { https: { port: config.port, host: config.host } };
    if (config.httpsAltPort !== undefined) addresses.httpsAlt = { port: config.httpsAltPort, host: config.host };
    return addresses as Record<keyof ConfigServerServers, ListenAddress>;
  },
});
