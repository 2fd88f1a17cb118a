import { join } from 'node:path';
import { runService } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';

runService({
  name: 'config-server',
  envFile: join(__dirname, '..', '.env'),
  loadConfig,
  createApp,
  listen: (config) => ({ https: { port: config.port, host: config.host } }),
});
