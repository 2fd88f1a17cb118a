import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createSilentLogger, listen } from '@repo/service';
import { createApp, loadConfig, type StorageApp, type StorageConfig } from '../../src';
import { contract } from './contract';

/** A clock the tests move by hand (ms since the epoch). */
export interface TestClock {
  now: () => number;
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
}

/** A clock starting at the real time, then moved only by `advance`. */
export function createTestClock(start = Date.now()): TestClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
  };
}

/** A fresh temporary folder; remove it with {@link removeDir}. */
export function makeTempDir(): string {
  return mkdtempSync(join(tmpdir(), 'storage-test-'));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A fresh temporary folder for each test of the enclosing suite (made before it, removed after
 * it): call in a `describe`, read the folder of the running test with the function returned.
 */
export function tempDirEachTest(): () => string {
  let dir: string | undefined;
  beforeEach(() => {
    dir = makeTempDir();
  });
  afterEach(() => {
    if (dir !== undefined) removeDir(dir);
    dir = undefined;
  });
  return () => {
    if (dir === undefined) throw new Error('tempDirEachTest: read the folder inside a test');
    return dir;
  };
}

/** A random key of 64 hex characters. */
export function randomKey(): string {
  return randomBytes(32).toString('hex');
}

/** A random value of `bytes` bytes, as hex. */
export function randomValue(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * The config the service would read from this environment (through the real loadConfig),
 * with the rate limit off unless the test sets it.
 */
export function testConfig(env: Record<string, string>): StorageConfig {
  return loadConfig({ RATE_LIMIT_PER_MINUTE: '0', RATE_LIMIT_PER_SECOND: '0', LOG_LEVEL: 'silent', ...env });
}

/** A service listening on a free loopback port. */
export interface RunningService {
  base: string;
  port: number;
  service: StorageApp;
  close(): Promise<void>;
}

/** Builds the service, starts it and listens on port 0 of 127.0.0.1. */
export async function startService(config: StorageConfig, now?: () => number): Promise<RunningService> {
  const service = createApp(config, { logger: createSilentLogger(), ...(now ? { now } : {}) });
  try {
    await service.start();
  } catch (err) {
    await service.close();
    throw err;
  }
  contract.attach(service.servers.http);
  const { port } = await listen(service.servers.http, 0, '127.0.0.1');
  return { base: `http://127.0.0.1:${port}`, port, service, close: () => service.close() };
}

/** A service on a temporary DATA_DIR of its own, which its `close()` removes. */
export interface TempService extends RunningService {
  dir: string;
}

/** Starts the service (see {@link startService}) on a fresh temporary DATA_DIR with `env` read by {@link testConfig}. */
export async function startTempService(env: Record<string, string> = {}, now?: () => number): Promise<TempService> {
  const dir = makeTempDir();
  try {
    const running = await startService(testConfig({ DATA_DIR: dir, ...env }), now);
    return { ...running, dir, close: async () => (await running.close(), removeDir(dir)) };
  } catch (err) {
    removeDir(dir);
    throw err;
  }
}

/** POSTs `body` as JSON (a string is sent as it is) and returns the status and parsed body. */
export async function postJson(url: string, body: unknown, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** GETs `url` and returns the status and parsed body. */
export async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

/** An HTTP answer: status, parsed body and headers. */
export interface JsonAnswer {
  status: number;
  body: any;
  headers: Headers;
}

function authorization(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: token.includes(' ') ? token : `Bearer ${token}` };
}

/**
 * DELETEs `url` with `Authorization: Bearer <token>` (a token holding a space is sent as the
 * whole header value; undefined sends none).
 */
export async function deleteJson(url: string, token?: string): Promise<JsonAnswer> {
  const res = await fetch(url, { method: 'DELETE', headers: authorization(token) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** POSTs `body` as JSON to a touch URL with the token (as {@link deleteJson} sends it). */
export async function touchJson(url: string, body: unknown, token?: string): Promise<JsonAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authorization(token) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Stores `value` under `key` (must answer 200) and returns the write token. */
export async function storeValue(base: string, key: string, value: string, ttl?: number): Promise<string> {
  const res = await postJson(`${base}/store`, ttl === undefined ? { key, value } : { key, value, ttl });
  if (res.status !== 200) throw new Error(`store answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.write_token as string;
}
