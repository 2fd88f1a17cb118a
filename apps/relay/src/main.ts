import { join } from 'node:path';
import { runService } from '@repo/service';
import { createApp } from './app';
import { loadConfig } from './config';

runService({
  name: 'relay',
  envFile: join(__dirname, '..', '.env'),
  loadConfig: (env) => loadConfig(env),
  createApp,
  listen: (config) => ({ ws: { port: config.wsPort, host: config.host }, http: { port: config.httpPort, host: config.host } }),
});
