import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket, { type ClientOptions } from 'ws';
import { createSilentLogger, listen, type Logger } from '@repo/service';
import { createApp, type RelayApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { contract, messages } from './contract';
import type { Envelope } from '@repo/relay-protocol';

export const PUBLISH_TOKEN = 'publish-token-for-tests-0123456789';
export const MESH_TOKEN = 'mesh-token-for-tests-0123456789abcd';
/** In the token file every test relay gets: scopes events and payments. */
export const WALLET_TOKEN = 'wallet-token-for-tests-0123456789ab';
/** In the same file: scope events only. */
export const EVENTS_TOKEN = 'events-token-for-tests-0123456789ab';
/** Headers of a client with the payments scope. */
export const WALLET = { headers: { Authorization: `Bearer ${WALLET_TOKEN}` } };

/** The token file written into each test relay's DATA_DIR (unless RELAY_TOKEN_FILE is given). */
export function writeTokenFile(
  dir: string,
  text = `# test tokens\nwallet events,payments ${WALLET_TOKEN}\ndashboard events ${EVENTS_TOKEN}\n`,
): string {
  const file = join(dir, 'tokens');
  writeFileSync(file, text);
  return file;
}

/** A relay listening on loopback (port 0 unless a port is given). */
export interface TestRelay {
  app: RelayApp;
  relayId: string;
  wsPort: number;
  wsUrl: string;
  httpUrl: string;
  dataDir: string;
  close(): Promise<void>;
}

const tempDirs: string[] = [];

/** A fresh temporary DATA_DIR, removed by {@link removeTempDirs}. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'relay-test-'));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * The relays and clients of a describe block, closed after each of its tests (and the temporary
 * folders removed): `start` a relay with `defaults` under `env`, `open` a client on one (with the
 * publish token when `publisher`).
 */
export function relaysAndClients(defaults: Record<string, string> = {}) {
  const relays: TestRelay[] = [];
  const clients: TestClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(relays.splice(0).map((r) => r.close()));
    removeTempDirs();
  });
  return {
    relays,
    clients,
    async start(env: Record<string, string> = {}): Promise<TestRelay> {
      const relay = await startRelay({ ...defaults, ...env });
      relays.push(relay);
      return relay;
    },
    async open(relay: TestRelay, publisher = false): Promise<TestClient> {
      const client = await connect(relay.wsUrl, publisher ? { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } } : {});
      clients.push(client);
      return client;
    },
  };
}

/** Starts a relay with test-friendly defaults; `env` overrides any variable. */
export async function startRelay(env: Record<string, string> = {}, logger: Logger = createSilentLogger()): Promise<TestRelay> {
  const dataDir = env.DATA_DIR ?? tempDir();
  const config = loadConfig({
    HOST: '127.0.0.1',
    WS_PORT: '0',
    HTTP_PORT: '0',
    RELAY_PUBLISH_TOKEN: PUBLISH_TOKEN,
    RELAY_MESH_TOKEN: MESH_TOKEN,
    RELAY_RECONNECT_MIN_MS: '50',
    RELAY_RECONNECT_MAX_MS: '200',
    RELAY_SYNC_TIMEOUT_MS: '2000',
    RELAY_TOKEN_FILE: env.RELAY_TOKEN_FILE ?? writeTokenFile(dataDir),
    RELAY_TOKEN_FILE_INTERVAL_MS: '50',
    ...env,
    DATA_DIR: dataDir,
  });
  const app = createApp(config, { logger });
  contract.attach(app.servers.http);
  await app.start();
  const ws = await listen(app.servers.ws, config.wsPort, '127.0.0.1');
  const http = await listen(app.servers.http, 0, '127.0.0.1');
  return {
    app,
    relayId: app.relay.relayId,
    wsPort: ws.port,
    wsUrl: `${app.wsScheme}://127.0.0.1:${ws.port}`,
    httpUrl: `http://127.0.0.1:${http.port}`,
    dataDir,
    close: () => app.close(),
  };
}

/** A WebSocket client that queues what it receives and waits for messages by predicate. */
export class TestClient {
  readonly ws: WebSocket;
  readonly received: Envelope[] = [];
  closeCode: number | undefined;
  closeReason = '';
  private waiters: { pred: (m: Envelope) => boolean; resolve: (m: Envelope) => void }[] = [];
  readonly closed: Promise<void>;

  constructor(url: string, options: ClientOptions = {}) {
    this.ws = new WebSocket(url, options);
    this.ws.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as Envelope;
      messages.record(message);
      this.received.push(message);
      for (const w of [...this.waiters]) {
        if (w.pred(message)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(message);
        }
      }
    });
    this.ws.on('error', () => undefined);
    this.closed = new Promise((resolve) => {
      this.ws.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        resolve();
      });
    });
  }

  /** Resolves when open; rejects with the HTTP status when the upgrade is refused. */
  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState === WebSocket.OPEN) return resolve();
      this.ws.once('open', () => resolve());
      this.ws.once('unexpected-response', (_req, res) => {
        res.resume();
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, headers: res.headers }));
      });
      this.ws.once('close', () => reject(new Error('closed before open')));
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message (already received or to come) matching `pred`. */
  next(pred: (m: Envelope) => boolean, timeoutMs = 5_000): Promise<Envelope> {
    const found = this.received.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no matching message within ${timeoutMs} ms; got types ${this.received.map((m) => m.type).join(',')}`));
      }, timeoutMs);
      const waiter = {
        pred,
        resolve: (m: Envelope) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Sends a command and waits for the reply with the same id. */
  async request(type: string, data: Record<string, unknown> = {}, id = `req-${Math.random().toString(36).slice(2)}`): Promise<Envelope> {
    this.send({ type, id, timestamp: Date.now(), data });
    return this.next((m) => m.id === id);
  }

  ofType(type: string): Envelope[] {
    return this.received.filter((m) => m.type === type);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close();
    const timer = setTimeout(() => this.ws.terminate(), 1_000);
    await this.closed;
    clearTimeout(timer);
  }
}

/** Opens a client and waits until it is connected. */
export async function connect(url: string, options: ClientOptions = {}): Promise<TestClient> {
  const client = new TestClient(url, options);
  await client.opened();
  return client;
}

/** Polls `check` until it returns true. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let counter = 0;
/** A TransactionReceived event envelope with the fields of the protocol's table. */
export function transactionEvent(overrides: Record<string, unknown> = {}): Envelope {
  counter++;
  return {
    type: 'TransactionReceived',
    id: `evt-${process.pid}-${Date.now()}-${counter}`,
    timestamp: Date.now(),
    data: {
      txid: 'a'.repeat(64),
      amount: 0.0001,
      address: 'tsp1qexampleaddress',
      block_height: 100 + counter,
      confirmations: 1,
      ...overrides,
    },
  };
}

/** fetch returning status and parsed JSON. */
export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

export function postJson(url: string, body: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  return getJson(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A BlockScanned event envelope (public: no token scope needed). */
export function blockEvent(height = 100 + ++counter): Envelope {
  return {
    type: 'BlockScanned',
    id: `blk-${process.pid}-${Date.now()}-${++counter}`,
    timestamp: Date.now(),
    data: { block_height: height, block_hash: 'b'.repeat(64), transactions_count: 2, silent_payments_found: 0 },
  };
}

/** Sends `events` on a publisher connection and resolves once every one of them was acknowledged. */
export async function publishAll(publisher: TestClient, events: Envelope[], timeoutMs = 20_000): Promise<void> {
  const want = new Set(events.map((e) => e.id));
  const acked = new Set(publisher.received.filter((m) => m.type === 'ack').map((m) => m.id));
  for (const e of events) publisher.send(e);
  await waitFor(
    () => {
      for (const m of publisher.received) if (m.type === 'ack') acked.add(m.id);
      for (const id of want) if (!acked.has(id)) return false;
      return true;
    },
    timeoutMs,
    `acks of ${events.length} events`,
  );
}

/** A logger that keeps every line (object and message) for assertions. */
export function createRecordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const record =
    (level: string) =>
    (obj: unknown, msg?: string): void => {
      lines.push(`${level} ${typeof obj === 'string' ? obj : `${JSON.stringify(obj)} ${msg ?? ''}`}`);
    };
  const logger = {
    level: 'debug',
    trace: record('trace'),
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    fatal: record('fatal'),
    child: () => logger,
  } as unknown as Logger;
  return { logger, lines };
}
