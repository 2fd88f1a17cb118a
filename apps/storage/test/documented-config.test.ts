import { COMMAND } from '../src/command';
import { loadConfig } from '../src';

const ENV = COMMAND.env ?? [];

// README, "Configuration": the numeric defaults `--help` shows (src/command.ts) are the ones the
// service applies. That --help and the README name every variable with the same default is
// checked for every app by describeEntryPoint (test/command.test.ts).
describe('documented configuration', () => {
  it('the numeric defaults shown are the ones loadConfig applies', () => {
    const config = loadConfig({});
    const shown = (name: string) => Number(ENV.find((v) => v.name === name)?.default.split(' ')[0]);
    expect({
      MAX_BODY_BYTES: config.maxBodyBytes,
      MAX_CONCURRENT_BODIES: config.maxConcurrentBodies,
      HEADERS_TIMEOUT_MS: config.headersTimeoutMs,
      REQUEST_TIMEOUT_MS: config.requestTimeoutMs,
      MAX_IN_FLIGHT: config.maxInFlight,
      MAX_CONNECTIONS: config.maxConnections,
      MAX_CONNECTIONS_PER_IP: config.maxConnectionsPerIp,
      STORAGE_MAX_TTL_SECONDS: config.maxTtlSeconds,
      STORAGE_SWEEP_INTERVAL_MS: config.sweepIntervalMs,
      STORAGE_SWEEP_BATCH: config.sweepBatchSize,
      RATE_LIMIT_PER_MINUTE: config.rateLimitPerMinute,
      RATE_LIMIT_PER_SECOND: config.rateLimitPerSecond,
      REDIS_CONNECT_TIMEOUT_MS: config.redisConnectTimeoutMs,
      PORT: config.port,
    }).toEqual({
      MAX_BODY_BYTES: shown('MAX_BODY_BYTES'),
      MAX_CONCURRENT_BODIES: shown('MAX_CONCURRENT_BODIES'),
      HEADERS_TIMEOUT_MS: shown('HEADERS_TIMEOUT_MS'),
      REQUEST_TIMEOUT_MS: shown('REQUEST_TIMEOUT_MS'),
      MAX_IN_FLIGHT: shown('MAX_IN_FLIGHT'),
      MAX_CONNECTIONS: shown('MAX_CONNECTIONS'),
      MAX_CONNECTIONS_PER_IP: shown('MAX_CONNECTIONS_PER_IP'),
      STORAGE_MAX_TTL_SECONDS: shown('STORAGE_MAX_TTL_SECONDS'),
      STORAGE_SWEEP_INTERVAL_MS: shown('STORAGE_SWEEP_INTERVAL_MS'),
      STORAGE_SWEEP_BATCH: shown('STORAGE_SWEEP_BATCH'),
      RATE_LIMIT_PER_MINUTE: shown('RATE_LIMIT_PER_MINUTE'),
      RATE_LIMIT_PER_SECOND: shown('RATE_LIMIT_PER_SECOND'),
      REDIS_CONNECT_TIMEOUT_MS: shown('REDIS_CONNECT_TIMEOUT_MS'),
      PORT: shown('PORT'),
    });
  });
});
