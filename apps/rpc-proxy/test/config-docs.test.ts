import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runEntryPoint } from '@repo/config/testing';
import { COMMAND } from '../src/command';
import { loadConfig, type ProxyConfig } from '../src/config';

/** The names of a `--help` row (`RPC_USER, RPC_PASSWORD` is two). */
const namesOf = (row: string) => row.split(',').map((n) => n.trim());

/** The README's configuration table: variable → default as written (backticks removed). */
function readmeDefaults(): Map<string, string> {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const table = readme.split('## Configuration')[1]?.split('\n## ')[0] ?? '';
  const out = new Map<string, string>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !cells[1]?.startsWith('`')) continue;
    const names = (cells[1].match(/`([A-Z_]+)`/g) ?? []).map((n) => n.replace(/`/g, ''));
    for (const name of names) out.set(name, (cells[2] ?? '').replace(/`/g, ''));
  }
  return out;
}

/** Numeric defaults the service applies, by variable (what the documents must say). */
const APPLIED: Record<string, (c: ProxyConfig) => number> = {
  PORT: (c) => c.port,
  NODE_MAX_CONCURRENCY: (c) => c.nodeMaxConcurrency,
  NODE_BATCHES_IN_FLIGHT: (c) => c.nodeBatchesInFlight,
  NODE_QUEUE_LIMIT: (c) => c.nodeQueueLimit,
  NODE_TIMEOUT_MS: (c) => c.nodeTimeoutMs,
  NODE_LONG_POLL_TIMEOUT_MS: (c) => c.nodeLongPollTimeoutMs,
  NODE_LONG_POLL_MAX_CONCURRENCY: (c) => c.nodeLongPollMaxConcurrency,
  RATE_LIMIT_PER_MINUTE: (c) => c.rateLimitPerMinute,
  MAX_BODY_BYTES: (c) => c.maxBodyBytes,
  MAX_CONCURRENT_BODIES: (c) => c.maxConcurrentBodies,
  MAX_CONNECTIONS: (c) => c.maxConnections,
  MAX_CONNECTIONS_PER_IP: (c) => c.maxConnectionsPerIp,
  HEADERS_TIMEOUT_MS: (c) => c.headersTimeoutMs,
  REQUEST_TIMEOUT_MS: (c) => c.requestTimeoutMs,
  AUTH_FAILURE_DELAY_MS: (c) => c.authFailureDelayMs,
  CACHE_MAX_BYTES: (c) => c.cacheMaxBytes,
  CACHE_MIN_CONFIRMATIONS: (c) => c.cacheMinConfirmations,
};

// README, "Configuration" and "Operations" (`--help` prints every variable with its default):
// the table, `--help` and what src/config.ts applies must agree.
describe('configuration: README table, --help and src/config.ts agree', () => {
  const help = new Map(COMMAND.env?.flatMap((row) => namesOf(row.name).map((n) => [n, row.default] as const)));
  const readme = readmeDefaults();

  it('--help gives each variable the README default, and numeric defaults are the applied ones', () => {
    const applied = loadConfig({});
    for (const [name, documented] of readme) {
      const inHelp = help.get(name);
      expect({ name, inHelp: inHelp !== undefined }).toEqual({ name, inHelp: true });
      // The README may say more ("unset (none)", "33554432 (32 MiB)"); what --help prints must be in it.
      expect({ name, readme: documented, help: inHelp }).toEqual({ name, readme: expect.stringContaining(inHelp as string), help: inHelp });
      const number = APPLIED[name];
      if (number) expect({ name, help: Number.parseInt(inHelp as string, 10) }).toEqual({ name, help: number(applied) });
    }
  });

  it('dist/main.js --help prints the corrected rows (the built entry point)', () => {
    const res = runEntryPoint(join(__dirname, '..', 'dist', 'main.js'), ['--help']);
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/\n {2}MAX_CONNECTIONS_PER_IP\s+32\s/);
    for (const name of ['MAX_CONCURRENT_BODIES', 'HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS']) expect(res.stdout).toContain(`  ${name} `);
  });
});
