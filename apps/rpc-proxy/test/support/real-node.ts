import { readFileSync } from 'node:fs';
import { createMemoryLogger, type LogRecord } from '@repo/service';
import type { RawReply, RegtestNode } from '@repo/regtest';
import { basic, CLIENT_PASSWORD, CLIENT_USER, startProxyApp, type StartedProxy } from './helpers';

/** A proxy in front of a real node, listening on port 0, with its log lines kept. */
export interface RealProxy extends StartedProxy {
  lines: LogRecord[];
}

/** Starts the proxy in front of `node` (its cookie file), with `env` on top. */
export async function startProxy(node: { url: string; cookieFile: string }, env: Record<string, string> = {}): Promise<RealProxy> {
  const { logger, lines } = createMemoryLogger('debug');
  const proxy = await startProxyApp(
    { BITCOIND_RPC_URL: node.url, BITCOIND_COOKIE_FILE: node.cookieFile, AUTH_FAILURE_DELAY_MS: '0', ...env },
    logger,
  );
  return { ...proxy, lines };
}

export { basic, CLIENT_PASSWORD, CLIENT_USER };

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
