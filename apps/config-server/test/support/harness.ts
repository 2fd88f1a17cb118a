import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { createMemoryLogger, generateSelfSignedCertificate, listen, type LogRecord } from '@repo/service';
import { deriveKey, hexToBytes } from '@repo/crypto';
import { createApp, type ConfigServerApp } from '../../src/app';
import { loadConfig, type ConfigServerConfig } from '../../src/config';
import { createKeyring, environmentKeyInfo } from '../../src/keyring';
import { contract } from './contract';

export const MASTER_KEY_HEX = '11'.repeat(32);

/** Files of the test storage tree: `<env>/<path>` → content. */
export const FILES: Record<string, string | Buffer> = {
  'dev/.env': 'HOST=db\nPORT=5432\nURL=postgres://$HOST:${PORT}/app\nA=$B\nB=$A\n',
  'dev/app.conf': 'url=${URL}\nmissing=${NOPE}\ncycle=${A}\nplain=$HOST\n',
  'dev/plain.txt': 'no placeholders here\n',
  'dev/sub/dir/nested.txt': 'nested ${HOST}\n',
  'dev/binary.bin': Buffer.from([0xff, 0xfe, 0x24, 0x7b, 0x48, 0x4f, 0x53, 0x54, 0x7d, 0x00, 0x80]),
  'prod/.env': 'HOST=prod-db\n',
  'prod/app.conf': 'url=${HOST}\n',
};

/** A running config server on a free port, over real TLS. */
export interface Harness {
  url: string;
  port: number;
  /** The second listener's port (`HTTPS_ALT_PORT` set: it listens on a free port too), else undefined. */
  altPort: number | undefined;
  ca: string;
  storageDir: string;
  dataDir: string;
  keysDir: string;
  config: ConfigServerConfig;
  service: ConfigServerApp;
  logs: LogRecord[];
  /** The key the server uses for `env` when no key file exists. */
  derivedKey(env: string): Uint8Array;
  close(): Promise<void>;
}

let tlsCache: Promise<{ cert: string; key: string }> | undefined;

/** Writes the storage tree and starts the server with `overrides` on top of its defaults (undefined: the app's own default). */
export async function startServer(
  overrides: Record<string, string | undefined> = {},
  options: { now?: () => number } = {},
): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), 'config-server-'));
  const storageDir = join(root, 'storage');
  const dataDir = join(root, 'data');
  for (const [path, content] of Object.entries(FILES)) {
    const full = join(storageDir, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, content);
  }
  writeFileSync(join(root, 'secret.txt'), 'outside the storage directory\n');
  mkdirSync(dataDir, { recursive: true });
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    STORAGE_DIR: storageDir,
    CONFIG_MASTER_KEY: MASTER_KEY_HEX,
    FILE_CACHE_MS: '0', // every request reads the disk, unless a test asks otherwise
    CLIENT_KEYS_RECHECK_MS: '0', // registered client keys are looked up afresh on every request
    // No rate limit unless a test sets one: a test file sharing one server made ten requests
    // within a second (the default burst), one short of a 429 it was not about.
    RATE_LIMIT_PER_SECOND: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    ...overrides,
  });
  const { logger, lines: logs } = createMemoryLogger();
  tlsCache ??= generateSelfSignedCertificate(['localhost', '127.0.0.1']);
  const tls = await tlsCache;
  const keyring = createKeyring({ keysDir: config.keysDir, masterKey: hexToBytes(MASTER_KEY_HEX), recheckMs: 0 });
  const service = createApp(config, { logger, keyring, tls, now: options.now });
  await service.start();
  contract.attach(service.servers.https);
  const { port } = await listen(service.servers.https, 0, '127.0.0.1');
  const alt = service.servers.httpsAlt;
  if (alt !== undefined) contract.attach(alt);
  const altPort = alt === undefined ? undefined : (await listen(alt, 0, '127.0.0.1')).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    altPort,
    ca: tls.cert,
    storageDir,
    dataDir,
    keysDir: config.keysDir,
    config,
    service,
    logs,
    derivedKey: (env) => deriveKey(hexToBytes(MASTER_KEY_HEX), environmentKeyInfo(env)),
    // The server first, then its folder: nothing of a test is left in the temporary directory.
    close: async () => {
      await service.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Registers `publicKey` for `env` as `<clientKeysDir>/<env>/<name>.pub` (base64, as keygen prints it). */
export function registerClientKey(h: Harness, env: string, name: string, publicKey: Uint8Array): string {
  const dir = join(h.config.clientKeysDir, env);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.pub`);
  writeFileSync(path, `${Buffer.from(publicKey).toString('base64')}\n`);
  return path;
}

/** A response read whole. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => Record<string, unknown>;
}

/** Sends `GET <rawPath>` exactly as written (no normalisation), trusting the test CA. */
export function get(h: Harness, rawPath: string, headers: Record<string, string> = {}, method = 'GET', body?: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: h.port, path: rawPath, method, headers, ca: h.ca, servername: 'localhost', agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens a raw TLS connection (for connection-cap tests). */
export function openTls(h: Harness): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: h.port, ca: h.ca, servername: 'localhost' }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Writes `request` (raw bytes, for requests no client library would send) over TLS and resolves
 * with everything the server answered once it closes the connection, or after `timeoutMs` (only
 * to catch a server that never closes it: generous, so a busy machine does not cut an answer).
 */
export function tlsExchange(h: Harness, request: string, timeoutMs = 20_000): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect({ host: '127.0.0.1', port: h.port, ca: h.ca, servername: 'localhost' }, () => socket.write(request));
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const end = received.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received)?.[1];
      resolve({
        status: status === undefined ? 0 : Number(status),
        head: end === -1 ? received : received.slice(0, end),
        body: end === -1 ? '' : received.slice(end + 4),
      });
    };
    const timer = setTimeout(done, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', done);
    socket.on('error', (err: Error) => (received === '' ? reject(err) : done()));
  });
}
