import { join } from 'node:path';
import { packageVersion, type CommandSpec } from '@repo/config';
import { serverLimitVariables } from '@repo/http';
import { SERVER_LIMIT_DEFAULTS } from './config';

/**
 * The entry point's command line: `--help` (usage and every environment variable with its
 * default: the README's configuration table) and `--version`; anything else is refused (exit 2).
 */
export const COMMAND: CommandSpec = {
  name: 'storage',
  version: packageVersion(join(__dirname, '..', 'package.json')),
  summary: 'a key/value store over HTTP',
  usage: ['[--permanent]'],
  options: [{ flag: '--permanent', description: 'values stored without ttl never expire (as STORAGE_PERMANENT=true)' }],
  env: [
    { name: 'HOST', default: '127.0.0.1', description: 'address to listen on (0.0.0.0 in containers)' },
    { name: 'PORT', default: '8081', description: 'port (0: any free port)' },
    {
      name: 'DATA_DIR',
      default: 'apps/storage/data',
      description: 'state folder (git-ignored); the SQLite file is DATA_DIR/storage.sqlite',
    },
    { name: 'LOG_LEVEL', default: 'info', description: 'fatal, error, warn, info, debug, trace, silent' },
    {
      name: 'STORAGE_PERMANENT',
      default: 'false',
      description: 'values stored without ttl never expire; the --permanent flag sets it too (the flag wins)',
    },
    { name: 'STORAGE_BACKEND', default: 'sqlite', description: 'sqlite or redis' },
    {
      name: 'REDIS_URL',
      default: 'redis://127.0.0.1:6379',
      description: 'redis://[user:password@]host:port[/db] or rediss://\u2026; never logged',
    },
    {
      name: 'REDIS_KEY_PREFIX',
      default: 'storage:',
      description: 'prefix of every Redis key written, so one Redis can serve several things',
    },
    { name: 'REDIS_CONNECT_TIMEOUT_MS', default: '10000', description: 'give up at start when Redis does not answer within this time' },
    {
      name: 'REDIS_COMMAND_TIMEOUT_MS',
      default: '5000',
      description: 'a Redis command not answered in this time (a Redis that hangs) fails its request with 503',
    },
    { name: 'STORAGE_MAX_TTL_SECONDS', default: '31536000 (365 days)', description: 'largest ttl accepted' },
    {
      name: 'MAX_BODY_BYTES',
      default: '1048576 (1 MiB)',
      description: 'largest request body (a value of up to about 512 KiB, sent as hex); above it, 413',
    },
    {
      name: 'MAX_CONCURRENT_BODIES',
      default: '64',
      description: 'request bodies read and parsed at once; one address may have a quarter of them; past either, 503',
    },
    { name: 'STORAGE_SWEEP_INTERVAL_MS', default: '60000', description: 'time between background sweeps of expired rows' },
    {
      name: 'STORAGE_SWEEP_BATCH',
      default: '1000',
      description: 'rows deleted per sweep transaction (a sweep runs batches until one comes back short, at most 100)',
    },
    { name: 'RATE_LIMIT_PER_MINUTE', default: '120000', description: 'requests per minute per client address (0: off)' },
    { name: 'RATE_LIMIT_PER_SECOND', default: '5000', description: 'burst: requests per second per client address (0: off)' },
    ...serverLimitVariables(SERVER_LIMIT_DEFAULTS),
    { name: 'MAX_IN_FLIGHT', default: '2048', description: 'requests in progress at once; more get 503' },
    {
      name: 'TRUST_PROXY',
      default: '(none)',
      description:
        "proxies whose X-Forwarded-For and X-Request-Id are believed: a hop count or comma-separated addresses/CIDRs (express's trust proxy; docs/README.md, Trusted proxies)",
    },
  ],
};
