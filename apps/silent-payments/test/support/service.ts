import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChainDouble, type ChainDouble, type ChainDoubleOptions } from '@repo/chain-double';
import { closeGracefully, createSilentLogger, listen, type Logger } from '@repo/service';
import { createApp, type SilentPaymentsService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { contract } from './contract';
import { startFakeRelay, waitFor, type FakeRelay } from './fake-relay';

/** The environment of a service against `@repo/chain-double` (user `u`, password `p`) keeping its data in `dataDir`; no long poll. */
export function chainDoubleEnv(nodeUrl: string, dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    SP_NETWORK: 'regtest',
    CHAIN_RPC_URL: nodeUrl,
    CHAIN_RPC_USER: 'u',
    CHAIN_RPC_PASSWORD: 'p',
    SCAN_LONG_POLL: 'false',
  };
}

/** A running service on port 0, for tests. */
export interface RunningService {
  service: SilentPaymentsService;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Options of {@link startService}. */
export interface StartServiceOptions {
  logger?: Logger;
  /** Check every answer against the OpenAPI document (default true; off for malformed-request tests). */
  contract?: boolean;
}

/** Builds the service from `env` (like the environment in production), listens on port 0 and starts the scanner. */
export async function startService(env: Record<string, string>, options: StartServiceOptions = {}): Promise<RunningService> {
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    SP_NETWORK: 'regtest',
    SCAN_POLL_INTERVAL_MS: '50',
    SCAN_MAX_BACKOFF_MS: '200',
    ...env,
  });
  const service = createApp(config, { logger: options.logger ?? createSilentLogger(), scannerMinBackoffMs: 20 });
  await service.start();
  if (options.contract ?? true) contract.attach(service.servers.http);
  const { port } = await listen(service.servers.http, 0, '127.0.0.1');
  return {
    service,
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      await closeGracefully(service.servers.http, 100);
      await service.close();
    },
  };
}

/** GET `path` as JSON. */
export async function getJson<T = Record<string, unknown>>(base: string, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

/** POST `body` as JSON. */
export async function postJson<T = Record<string, unknown>>(
  base: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Waits until the service has scanned up to `height` and says `synced`. */
export function syncedTo(running: RunningService, height: number, timeoutMs = 15_000): Promise<void> {
  const status = () => running.service.scanner.status();
  return waitFor(() => status().scanned_height === height && status().state === 'synced', timeoutMs, `scan to ${height}`);
}

/** The environment of a service with no scanner and no node (the HTTP API and the store only) on `dataDir`. */
export function offlineEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return { DATA_DIR: dataDir, SP_NETWORK: 'signet', SCANNER_ENABLED: 'false', CHAIN_RPC_URL: 'http://127.0.0.1:9', ...env };
}

/** A service per test on a temporary DATA_DIR (see {@link useOfflineService}). */
export interface OfflineServiceFixture {
  /** This test's DATA_DIR. */
  readonly dir: string;
  /** The service started last in this test. */
  readonly running: RunningService;
  /**
   * Starts the service on this test's DATA_DIR (created on the first call) with {@link offlineEnv}
   * and `env`; a later call in the same test closes the running one first (a restart).
   */
  start(env?: Record<string, string>, options?: StartServiceOptions): Promise<RunningService>;
}

/** Registers the hooks of a service per test with no node: afterEach closes it and removes its DATA_DIR. */
export function useOfflineService(prefix: string): OfflineServiceFixture {
  let dir: string | undefined;
  let running: RunningService | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return {
    get dir() {
      if (dir === undefined) throw new Error('no DATA_DIR before start()');
      return dir;
    },
    get running() {
      if (running === undefined) throw new Error('no service before start()');
      return running;
    },
    async start(env = {}, options = {}) {
      dir ??= mkdtempSync(join(tmpdir(), prefix));
      await running?.close();
      running = undefined;
      running = await startService(offlineEnv(dir, env), options);
      return running;
    },
  };
}

const NODE_USER = 'proxytest';
const NODE_PASSWORD = 'proxytestpass';

/** A chain double, a fake relay and a DATA_DIR per test (see {@link useChainDouble}). */
export interface ChainDoubleFixture {
  /** The double's RPC credentials (the service's CHAIN_RPC_USER/CHAIN_RPC_PASSWORD). */
  readonly user: string;
  readonly password: string;
  readonly node: ChainDouble;
  readonly relay: FakeRelay;
  readonly dir: string;
  /** The service started last in this test. */
  readonly running: RunningService;
  /** The service's environment toward the node and the relay, with `extra` on top. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Starts the service with {@link env} and `extra`; a later call closes the running one first. */
  start(extra?: Record<string, string>, options?: StartServiceOptions): Promise<RunningService>;
  /** Waits until the service has scanned to the double's tip and is synced. */
  synced(timeoutMs?: number): Promise<void>;
}

/**
 * Registers the hooks of the chain-double suites: before each test a regtest chain double
 * (`double`: more of its options), a fake relay taking `relayToken` and a fresh DATA_DIR; after
 * each, the service, the relay and the node are closed and the directory removed.
 */
export function useChainDouble(prefix: string, double: ChainDoubleOptions = {}, relayToken = 'relay-publish-token'): ChainDoubleFixture {
  let node: ChainDouble | undefined;
  let relay: FakeRelay | undefined;
  let dir: string | undefined;
  let running: RunningService | undefined;
  beforeEach(async () => {
    node = await startChainDouble({ port: 0, host: '127.0.0.1', user: NODE_USER, password: NODE_PASSWORD, chain: 'regtest', ...double });
    relay = await startFakeRelay(relayToken);
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
    await relay?.close();
    await node?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const defined = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`no ${what} outside a test`);
    return value;
  };
  const fixture: ChainDoubleFixture = {
    user: NODE_USER,
    password: NODE_PASSWORD,
    get node() {
      return defined(node, 'chain double');
    },
    get relay() {
      return defined(relay, 'relay');
    },
    get dir() {
      return defined(dir, 'DATA_DIR');
    },
    get running() {
      return defined(running, 'service (start() it first)');
    },
    env: (extra = {}) => ({
      DATA_DIR: fixture.dir,
      CHAIN_RPC_URL: fixture.node.url,
      CHAIN_RPC_USER: NODE_USER,
      CHAIN_RPC_PASSWORD: NODE_PASSWORD,
      RELAY_URL: fixture.relay.url,
      RELAY_PUBLISH_TOKEN: relayToken,
      ...extra,
    }),
    async start(extra = {}, options = {}) {
      await running?.close();
      running = undefined;
      running = await startService(fixture.env(extra), options);
      return running;
    },
    synced: (timeoutMs = 15_000) => syncedTo(fixture.running, fixture.node.tipHeight(), timeoutMs),
  };
  return fixture;
}
