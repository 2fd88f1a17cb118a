import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND } from '../src/command';

const ENV = COMMAND.env ?? [];
import { loadConfig } from '../src';

/** Every variable loadConfig reads, found by giving it an environment that records each lookup. */
function variablesRead(): string[] {
  const read = new Set<string>();
  const env = new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
      has(_target, name) {
        if (typeof name === 'string') read.add(name);
        return false;
      },
    },
  );
  loadConfig(env);
  return [...read].sort();
}

/** The README's configuration table: variable name and its default (the first `code` span of the column). */
function readmeTable(): Map<string, string> {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('### Limits'));
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([A-Z_]+)` \| ([^|]*) \|/gm)) {
    const name = match[1]!;
    const fallback = /`([^`]*)`/.exec(match[2]!)?.[1] ?? match[2]!.trim();
    rows.set(name, fallback);
  }
  return rows;
}

// README, "Configuration" and "Operations": the table lists every variable the service reads with
// its default, and `--help` prints the same table (src/command.ts).
describe('documented configuration', () => {
  const read = variablesRead();

  it('the README lists every variable loadConfig reads, and no other', () => {
    expect([...readmeTable().keys()].sort()).toEqual(read);
  });

  it('--help (src/command.ts) lists every variable loadConfig reads, with the README default', () => {
    expect(ENV.map((v) => v.name).sort()).toEqual(read);
    const readme = readmeTable();
    for (const v of ENV) {
      // A default without a code span in the README ("unset (none)") is compared as words.
      const documented = readme.get(v.name) ?? '';
      const shown = v.default.split(' ')[0]!;
      expect({ name: v.name, default: documented.includes(' ') ? documented.includes(shown) : shown }).toEqual({
        name: v.name,
        default: documented.includes(' ') ? true : documented,
      });
    }
  });

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
