import { join } from 'node:path';
import { runService } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';

runService({
  name: 'rpc-proxy',
  envFile: join(__dirname, '..', '.env'),
  loadConfig,
  createApp,
  listen: (config) => ({ http: { port: config.port, host: config.host } }),
});
