import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { createSilentLogger, listen, type Logger } from '@repo/service';
import { startService, type ServiceOptions, type ServiceProcess } from '@repo/service/testing';
import { startChainDouble, type ChainDouble, type ChainDoubleOptions } from '@repo/chain-double';
import { createApp, type ProxyApp, type ProxyDeps } from '../../src/app';
import { contract } from './contract';
import { loadConfig } from '../../src/config';

export const NODE_USER = 'proxytest';
export const NODE_PASSWORD = 'proxytestpass';
export const CLIENT_USER = 'alice';
export const CLIENT_PASSWORD = 'alice-secret';

/** A running proxy in front of a double. */
export interface Harness extends StartedProxy {
  node: ChainDouble;
}

/** A proxy started by {@link startProxyApp}. */
export interface StartedProxy {
  app: ProxyApp;
  url: string;
  dataDir: string;
  /** Drops its connections, closes it and removes its DATA_DIR. */
  close(): Promise<void>;
}

/**
 * Starts a proxy from `env` on top of a temporary DATA_DIR and the test client's credentials,
 * listening on port 0 (`attach` sees its server first: the contract recorder). One start-up
 * for the double's harness and the real-node suites.
 */
export async function startProxyApp(
  env: Record<string, string>,
  logger: Logger,
  attach?: (server: Server) => void,
  batching?: ProxyDeps['batching'],
): Promise<StartedProxy> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpc-proxy-'));
  const app = createApp(loadConfig({ DATA_DIR: dataDir, RPC_USER: CLIENT_USER, RPC_PASSWORD: CLIENT_PASSWORD, ...env }), {
    logger,
    batching,
  });
  await app.start();
  attach?.(app.servers.http);
  const address = await listen(app.servers.http, 0, '127.0.0.1');
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    dataDir,
    async close() {
      app.servers.http.closeAllConnections();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts a double and a proxy in front of it with `env` on top of the defaults; silent unless given a `logger`. */
export async function startHarness(
  env: Record<string, string> = {},
  nodeOptions: ChainDoubleOptions = {},
  logger: Logger = createSilentLogger(),
  batching?: ProxyDeps['batching'],
): Promise<Harness> {
  const creds = nodeOptions.cookieFile === undefined ? { user: NODE_USER, password: NODE_PASSWORD } : {};
  const node = await startChainDouble({ ...creds, initialBlocks: 101, authFailureDelayMs: 0, ...nodeOptions });
  const nodeCreds: Record<string, string> = nodeOptions.cookieFile
    ? { BITCOIND_COOKIE_FILE: nodeOptions.cookieFile }
    : { BITCOIND_RPC_USER: NODE_USER, BITCOIND_RPC_PASSWORD: NODE_PASSWORD };
  const proxy = await startProxyApp(
    { BITCOIND_RPC_URL: node.url, ...nodeCreds, AUTH_FAILURE_DELAY_MS: '20', ...env },
    logger,
    (server) => contract.attach(server),
    batching,
  );
  return {
    ...proxy,
    node,
    async close() {
      await proxy.close();
      await node.close();
    },
  };
}

/** Basic authorization value. */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** POSTs `body` (string, or JSON-encoded) to `url + path`; returns status, headers and text. */
export async function post(
  url: string,
  body: unknown,
  options: { path?: string; auth?: string | null } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => any }> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const auth = options.auth === undefined ? basic(CLIENT_USER, CLIENT_PASSWORD) : options.auth;
  if (auth !== null) headers.Authorization = auth;
  const res = await fetch(url + (options.path ?? '/'), {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** A JSON-RPC 1.0 call. */
export function call(
  url: string,
  method: string,
  params: unknown = [],
  options: { path?: string; auth?: string | null; version?: '1.0' | '2.0'; id?: unknown } = {},
) {
  return post(url, { jsonrpc: options.version ?? '1.0', id: options.id ?? 'x', method, params }, options);
}

/** A request held by a {@link Gate}. */
interface HeldRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  res: ServerResponse;
}

/**
 * An HTTP hop between the proxy and the double that holds every request until released (so
 * a test decides when the node answers, without timing), counts what reaches it, and can
 * drop held and new requests (a node going away).
 */
export interface Gate {
  url: string;
  /** Where released requests go (the double's URL). */
  target: string;
  /** Requests received so far. */
  readonly received: number;
  /** Requests held now. */
  readonly held: number;
  /** Forwards the held requests and lets the next ones through at once (`open`) or holds them too. */
  release(open?: boolean): void;
  /** Closes the connections of held requests and of every next one. */
  goDown(): void;
  close(): Promise<void>;
}

/** Starts a closed {@link Gate} on port 0. */
export async function startGate(): Promise<Gate> {
  const held: HeldRequest[] = [];
  let received = 0;
  let open = false;
  let down = false;
  let target = '';

  async function pass(r: HeldRequest): Promise<void> {
    try {
      const res = await fetch(target + r.path, { method: 'POST', headers: r.headers, body: r.body });
      const body = Buffer.from(await res.arrayBuffer());
      r.res
        .writeHead(res.status, { 'Content-Type': res.headers.get('content-type') ?? 'text/html', 'Content-Length': String(body.length) })
        .end(body);
    } catch {
      r.res.destroy();
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received++;
      if (down) {
        res.destroy();
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type']) {
        const v = req.headers[name];
        if (typeof v === 'string') headers[name] = v;
      }
      const r = { path: req.url ?? '/', headers, body: Buffer.concat(chunks), res };
      if (open) void pass(r);
      else held.push(r);
    });
  });
  const address = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${address.port}`,
    get target() {
      return target;
    },
    set target(url: string) {
      target = url;
    },
    get received() {
      return received;
    },
    get held() {
      return held.length;
    },
    release(openAfter = false) {
      open = openAfter;
      for (const r of held.splice(0)) void pass(r);
    },
    goDown() {
      down = true;
      for (const r of held.splice(0)) r.res.destroy();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Waits until `condition()` holds, polling every 5 ms; past `timeoutMs` it throws, naming `what`
 * (rather than spinning on until jest's timeout, after the test too).
 */
export async function until(condition: () => boolean, what = 'the condition', timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A whole HTTP/1.1 message read off a raw connection, as latin1 text. */
export interface RawMessage {
  head: string;
  body: string;
}

/**
 * Calls `onMessage` for each whole message read on `socket`, framed by its Content-Length (none:
 * no body; a chunked body is not read): the raw clients and servers of the tests.
 */
export function onHttpMessages(socket: Socket, onMessage: (message: RawMessage) => void): void {
  let data = '';
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString('latin1');
    for (;;) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = data.slice(0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (data.length < end + 4 + length) return;
      const body = data.slice(end + 4, end + 4 + length);
      data = data.slice(end + 4 + length);
      onMessage({ head, body });
    }
  });
}

/** The proxy run as operators run it (`node dist/main.js`: `npm run build` first), and where it listens. */
export type ProxyProcess = ServiceProcess & { url: string };

/** Starts the built proxy on a port of its own with `env` and waits for its `listening` line (`@repo/service/testing`). */
export async function startProxyProcess(
  env: Record<string, string>,
  options: Pick<ServiceOptions, 'nodeArgs' | 'user'> = {},
): Promise<ProxyProcess> {
  const proxy = await startService({
    name: 'rpc-proxy',
    appDir: join(__dirname, '..', '..'),
    env: { PORT: '0', ...env },
    ready: 'rpc-proxy listening',
    ...options,
  });
  return Object.assign(proxy, { url: `http://127.0.0.1:${proxy.readyLog.port as number}` });
}
