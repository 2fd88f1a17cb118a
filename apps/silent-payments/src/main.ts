import { join } from 'node:path';
import { handleCommandLine } from '@repo/config';
import { runService } from '@repo/service';
import { createApp } from './app';
import { COMMAND } from './command';
import { loadConfig } from './config';

// --help, --version, and exit 2 on an unknown option, before anything is read or opened.
handleCommandLine(COMMAND);

runService({
  name: 'silent-payments',
  envFile: join(__dirname, '..', '.env'),
  loadConfig,
  createApp,
  listen: (config) => ({ http: { port: config.port, host: config.host } }),
});
