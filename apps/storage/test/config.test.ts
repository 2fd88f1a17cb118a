import { join, resolve } from 'node:path';
import { ConfigError } from '@repo/config';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_TTL_SECONDS, loadConfig } from '../src';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8081,
      dataDir: resolve(__dirname, '..', 'data'),
      logLevel: 'info',
      permanent: false,
      backend: 'sqlite',
      redisUrl: 'redis://127.0.0.1:6379',
      redisKeyPrefix: 'storage:',
      defaultTtlSeconds: DEFAULT_TTL_SECONDS,
      maxTtlSeconds: 31_536_000,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    });
    expect(DEFAULT_MAX_BODY_BYTES).toBe(1024 * 1024);
    expect(config.sqliteFile).toBe(join(config.dataDir, 'storage.sqlite'));
  });

  it('reads the configuration variables of docs/storage.md', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '9000',
      DATA_DIR: '/tmp/storage-data',
      STORAGE_BACKEND: 'redis',
      REDIS_URL: 'redis://redis:6380/2',
      STORAGE_PERMANENT: 'true',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      dataDir: '/tmp/storage-data',
      backend: 'redis',
      redisUrl: 'redis://redis:6380/2',
      permanent: true,
      logLevel: 'debug',
    });
  });

  it('turns the permanent option on with --permanent', () => {
    expect(loadConfig({}, ['--permanent']).permanent).toBe(true);
    expect(loadConfig({ STORAGE_PERMANENT: 'false' }, ['--permanent']).permanent).toBe(true);
    expect(loadConfig({}, []).permanent).toBe(false);
  });

  it('refuses an unknown command-line option', () => {
    expect(() => loadConfig({}, ['--permanant'])).toThrow(ConfigError);
    expect(() => loadConfig({}, ['--permanant'])).toThrow(/--permanent/);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['STORAGE_BACKEND', 'mysql'],
    ['STORAGE_PERMANENT', 'maybe'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['REDIS_URL', 'not a url'],
    ['MAX_BODY_BYTES', '-1'],
    ['STORAGE_MAX_TTL_SECONDS', '0'],
    ['STORAGE_SWEEP_INTERVAL_MS', '1'],
    ['STORAGE_SWEEP_BATCH', '0'],
    ['RATE_LIMIT_PER_MINUTE', 'lots'],
    ['MAX_CONNECTIONS_PER_IP', '0'],
    ['LOG_LEVEL', 'loud'],
  ])('throws a ConfigError naming %s when it is %j', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
