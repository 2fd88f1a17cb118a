import { closeGracefully, createSilentLogger, listen, type Logger } from '@repo/service';
import { createApp, type SilentPaymentsService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { contract } from './contract';

/** A running service on port 0, for tests. */
export interface RunningService {
  service: SilentPaymentsService;
  url: string;
  close(): Promise<void>;
}

/** Builds the service from `env` (like the environment in production), listens on port 0 and starts the scanner. */
export async function startService(env: Record<string, string>, options: { logger?: Logger } = {}): Promise<RunningService> {
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
  contract.attach(service.servers.http);
  const { port } = await listen(service.servers.http, 0, '127.0.0.1');
  return {
    service,
    url: `http://127.0.0.1:${port}`,
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
