import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@repo/config';
import { rawExchange } from '@repo/http/testing';
import { createSilentLogger, generateSelfSignedCertificate, listen } from '@repo/service';
import { itAsUnprivileged, runStart, type ProcessUser } from '@repo/service/testing';
import { createApp } from '../src/app';
import { createSqliteLog } from '../src/event-log';
import { loadConfig } from '../src/config';
import { connect, createRecordingLogger, getJson, removeTempDirs, tempDir, WALLET, writeTokenFile } from './support/helpers';

afterAll(() => removeTempDirs());

const config = (env: Record<string, string>) => loadConfig({ HOST: '127.0.0.1', WS_PORT: '0', HTTP_PORT: '0', ...env });

// The lifecycle every app shares: createApp builds (no file written or opened, nothing listening),
// start() writes and opens, close() stops everything and may be called at any point, twice.
describe('relay lifecycle', () => {
  it('createApp writes nothing and listens on nothing; start() writes the id, the token and the event log', async () => {
    const dataDir = tempDir();
    const { logger, lines } = createRecordingLogger();
    const app = createApp(config({ DATA_DIR: dataDir }), { logger });
    try {
      expect(readdirSync(dataDir)).toEqual([]);
      expect(app.servers.ws.listening).toBe(false);
      expect(app.servers.http.listening).toBe(false);
      expect(lines.filter((l) => l.includes('publish token'))).toEqual([]);

      await app.start();
      expect(readdirSync(dataDir).sort()).toEqual(expect.arrayContaining(['events.db', 'publish-token', 'relay-id']));
      const token = readFileSync(join(dataDir, 'publish-token'), 'utf8').trim();
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(join(dataDir, 'publish-token')).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dataDir, 'relay-id'), 'utf8').trim()).toBe(app.relay.relayId);
      // The token file is logged with its fingerprint, never the token.
      const tokenLines = lines.filter((l) => l.includes('publish token'));
      expect(tokenLines).toHaveLength(1);
      expect(tokenLines[0]).toContain('"created":true');
      expect(tokenLines.join('\n')).not.toContain(token);
      expect(app.servers.http.listening).toBe(false);

      // Started, it serves once listened: the event log takes a write (GET /ready).
      const { port } = await listen(app.servers.http, 0, '127.0.0.1');
      expect(await getJson(`http://127.0.0.1:${port}/ready`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    } finally {
      await app.close();
    }
    await expect(app.close()).resolves.toBeUndefined();
    expect(app.servers.http.listening).toBe(false);
  });

  it('writes every file of DATA_DIR with mode 0600, the event log (payment events) and its WAL included', async () => {
    const dataDir = tempDir();
    const app = createApp(config({ DATA_DIR: dataDir }), { logger: createSilentLogger() });
    try {
      await app.start();
      // The event log takes a write (GET /ready over a real socket), so SQLite has its WAL and shm files.
      const { port } = await listen(app.servers.http, 0, '127.0.0.1');
      expect(await getJson(`http://127.0.0.1:${port}/ready`)).toMatchObject({ status: 200 });
      const files = readdirSync(dataDir).sort();
      expect(files).toEqual(expect.arrayContaining(['events.db', 'events.db-wal', 'publish-token', 'relay-id']));
      const modes = Object.fromEntries(files.map((f) => [f, (statSync(join(dataDir, f)).mode & 0o777).toString(8)]));
      expect(modes).toEqual(Object.fromEntries(files.map((f) => [f, '600'])));
    } finally {
      await app.close();
    }
  });

  it('reads the generated relay id and publish token back on the next start', async () => {
    const dataDir = tempDir();
    const first = createApp(config({ DATA_DIR: dataDir }), { logger: createSilentLogger() });
    await first.start();
    await first.close();
    const token = readFileSync(join(dataDir, 'publish-token'), 'utf8');
    const second = createApp(config({ DATA_DIR: dataDir }), { logger: createSilentLogger() });
    await second.start();
    await second.close();
    expect(second.relay.relayId).toBe(first.relay.relayId);
    expect(second.relay.relayId).toMatch(/^relay-[0-9a-f]{12}$/);
    expect(second.publishTokenFile).toBe(join(dataDir, 'publish-token'));
    expect(readFileSync(join(dataDir, 'publish-token'), 'utf8')).toBe(token);
  });

  it('writes no token or id file when RELAY_PUBLISH_TOKEN and RELAY_ID are set', async () => {
    const dataDir = tempDir();
    const app = createApp(config({ DATA_DIR: dataDir, RELAY_PUBLISH_TOKEN: 'x'.repeat(32), RELAY_ID: 'fixed' }), {
      logger: createSilentLogger(),
    });
    await app.start();
    await app.close();
    expect(existsSync(join(dataDir, 'publish-token'))).toBe(false);
    expect(existsSync(join(dataDir, 'relay-id'))).toBe(false);
    expect(app.publishTokenFile).toBeUndefined();
    expect(app.relay.relayId).toBe('fixed');
  });

  it('close() without start() resolves, twice, and leaves DATA_DIR empty', async () => {
    const dataDir = tempDir();
    const app = createApp(config({ DATA_DIR: dataDir, RELAY_TOKEN_FILE: join(dataDir, 'missing') }), { logger: createSilentLogger() });
    await expect(app.close()).resolves.toBeUndefined();
    await expect(app.close()).resolves.toBeUndefined();
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('a start that fails on an unreadable RELAY_TOKEN_FILE rejects with a ConfigError naming it and writes nothing', async () => {
    const dataDir = tempDir();
    const app = createApp(config({ DATA_DIR: dataDir, RELAY_TOKEN_FILE: join(dataDir, 'missing') }), { logger: createSilentLogger() });
    const started = app.start();
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(/RELAY_TOKEN_FILE: cannot read .*missing: ENOENT/);
    await app.close();
    await app.close();
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('a start that cannot read RELAY_PEER_CA_FILE rejects with a ConfigError naming it, its path and the errno', async () => {
    const dataDir = tempDir();
    const missing = join(dataDir, 'peer-ca.pem');
    const app = createApp(config({ DATA_DIR: dataDir, RELAY_PEER_CA_FILE: missing }), { logger: createSilentLogger() });
    await expect(app.start()).rejects.toThrow(new ConfigError(`RELAY_PEER_CA_FILE (${missing}) cannot be read: ENOENT`));
    await app.close();
  });

  it('loads the TLS certificate in start(): the files need not exist when the app is built', async () => {
    const dataDir = tempDir();
    const certFile = join(dataDir, 'cert.pem');
    const keyFile = join(dataDir, 'key.pem');
    const app = createApp(
      config({ DATA_DIR: dataDir, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, RELAY_TOKEN_FILE: writeTokenFile(dataDir) }),
      { logger: createSilentLogger() },
    );
    try {
      expect(app.wsScheme).toBe('wss');
      const { cert, key } = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
      writeFileSync(certFile, cert);
      writeFileSync(keyFile, key);
      await app.start();
      const { port } = await listen(app.servers.ws, 0, '127.0.0.1');
      const client = await connect(`wss://127.0.0.1:${port}`, { ...WALLET, ca: cert });
      expect(await client.request('ping')).toMatchObject({ type: 'pong' });
      await client.close();
      // ws:// to the wss:// port: a plain HTTP answer saying so, in the relay's error record.
      const plain = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      expect(plain.status).toBe(400);
      expect(JSON.parse(plain.body)).toEqual({
        error: { code: 'INVALID_REQUEST', message: 'plain HTTP sent to a TLS port: connect with https:// or wss://' },
      });
    } finally {
      await app.close();
    }
  });
});

describe('relay entry point', () => {
  /** A start that stops with exit 1 and one fatal line holding `text`: no stack trace, never listening. */
  const refused = (text: string) => ({ code: 1, fatal: [expect.stringContaining(text)], listened: false, stack: false });
  // The run ends on the child's exit (an event). Compiling src/ at start took over 15 s on a busy
  // machine (runStart's default deadline): the deadline only catches a child that hangs.
  const HANG_MS = 120_000;
  const runMain = (env: Record<string, string>, user?: ProcessUser) =>
    runStart({
      cwd: join(__dirname, '..'),
      env: { WS_PORT: '0', HTTP_PORT: '0', ...env },
      user,
      listening: 'relay listening',
      timeoutMs: HANG_MS,
    });

  it(
    'exits 1 with one fatal line naming RELAY_TOKEN_FILE when start() cannot read it',
    async () => {
      const dataDir = tempDir();
      expect(await runMain({ DATA_DIR: dataDir, RELAY_TOKEN_FILE: join(dataDir, 'missing') })).toMatchObject(
        refused('configuration error: RELAY_TOKEN_FILE'),
      );
      expect(readdirSync(dataDir)).toEqual([]);
    },
    HANG_MS + 10_000,
  );

  // As root, the child runs as nobody (unprivilegedUser), who cannot write root's 0444 file.
  itAsUnprivileged(
    'exits 1 with one fatal line saying the event log is read-only, instead of serving and failing every publish',
    async (user) => {
      const dataDir = tempDir();
      const file = join(dataDir, 'events.db');
      await createSqliteLog({ file, retention: { maxAgeMs: 60_000, maxEvents: 10 } }).close();
      chmodSync(file, 0o444);
      chmodSync(dataDir, 0o777);
      const run = { DATA_DIR: dataDir, RELAY_PUBLISH_TOKEN: 'a'.repeat(32), RELAY_ID: 'relay-test' };
      expect(await runMain(run, user)).toMatchObject(
        refused(`cannot open the event log ${file} (DATA_DIR): it can be read but not written by this process`),
      );
    },
    HANG_MS + 10_000,
  );
});
