import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLogger, listen, type LogRecord } from '@repo/service';
import type { RawReply, RegtestNode } from '@repo/regtest';
import { createApp, type ProxyApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { basic } from './helpers';

export const CLIENT_USER = 'alice';
export const CLIENT_PASSWORD = 'alice-secret';

/** A proxy in front of a real node, listening on port 0, with its log lines kept. */
export interface RealProxy {
  app: ProxyApp;
  url: string;
  lines: LogRecord[];
  close(): Promise<void>;
}

/** Starts the proxy in front of `node` (its cookie file), with `env` on top. */
export async function startProxy(node: { url: string; cookieFile: string }, env: Record<string, string> = {}): Promise<RealProxy> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpc-proxy-real-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    BITCOIND_RPC_URL: node.url,
    BITCOIND_COOKIE_FILE: node.cookieFile,
    RPC_USER: CLIENT_USER,
    RPC_PASSWORD: CLIENT_PASSWORD,
    AUTH_FAILURE_DELAY_MS: '0',
    ...env,
  });
  const { logger, lines } = createMemoryLogger('debug');
  const app = createApp(config, { logger });
  await app.start();
  const address = await listen(app.servers.http, 0, '127.0.0.1');
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    lines,
    async close() {
      app.servers.http.closeAllConnections();
      await new Promise((r) => app.servers.http.close(r));
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { basic };

/** POSTs `body` as written (or GETs with method GET) to `url + path`; status, content type, exact bytes. */
export async function send(
  url: string,
  body: string,
  options: { path?: string; auth?: string | null; method?: string } = {},
): Promise<RawReply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const auth = options.auth === undefined ? basic(CLIENT_USER, CLIENT_PASSWORD) : options.auth;
  if (auth !== null) headers.Authorization = auth;
  const method = options.method ?? 'POST';
  const res = await fetch(url + (options.path ?? '/'), { method, headers, body: method === 'POST' ? body : undefined });
  const buf = Buffer.from(await res.arrayBuffer());
  return { status: res.status, contentType: res.headers.get('content-type'), body: buf, text: buf.toString('utf8') };
}

/** The same request to the proxy (client credentials) and to the node (its cookie). */
export async function both(
  proxy: RealProxy,
  node: RegtestNode,
  body: string,
  path = '/',
): Promise<{ viaProxy: RawReply; direct: RawReply }> {
  const viaProxy = await send(proxy.url, body, { path });
  const direct = await node.post(body, { path });
  return { viaProxy, direct };
}

/** The client cookie the proxy wrote (`__cookie__:<hex>`) as an Authorization value. */
export function proxyCookieAuth(proxy: RealProxy): string {
  return `Basic ${Buffer.from(readFileSync(proxy.app.cookieFile, 'utf8').trim()).toString('base64')}`;
}

/** A JSON-RPC 1.0 body. */
export function v1(method: string, params: unknown[] = [], id: unknown = 'x'): string {
  return JSON.stringify({ jsonrpc: '1.0', id, method, params });
}
