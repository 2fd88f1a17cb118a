import { join } from 'node:path';
import { runService } from '@repo/service';
import { createApp } from './app';
import { APP_DIR, loadConfig } from './config';

runService({
  name: 'silent-payments',
  envFile: join(APP_DIR, '.env'),
  loadConfig,
  createApp,
  listen: (config) => ({ http: { port: config.port, host: config.host } }),
});
