import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeGracefully, createSilentLogger, listen } from '@repo/service';
import { itAsUnprivileged, runStart, type ProcessUser } from '@repo/service/testing';
import { createApp, DATABASE_FILE, type SilentPaymentsService } from '../src/app';
import { loadConfig } from '../src/config';
import { KEY_FILES } from '../src/keys';
import { openStore } from '../src/store';
import { waitFor } from './support/fake-relay';
import { getJson, useChainDouble } from './support/service';

// createApp builds only; start() writes, opens and connects; close() stops what was built, once.
describe('silent-payments lifecycle', () => {
  const chain = useChainDouble('sp-life-');
  let service: SilentPaymentsService | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });
  // Not created yet: DATA_DIR is start()'s to create.
  const dataDir = () => join(chain.dir, 'data');

  const build = () =>
    createApp(loadConfig(chain.env({ DATA_DIR: dataDir(), SP_NETWORK: 'regtest', SCAN_POLL_INTERVAL_MS: '50' })), {
      logger: createSilentLogger(),
      scannerMinBackoffMs: 20,
    });
  /** What the service did outside itself: files, relay connections, calls to the node. */
  const footprint = () => ({
    dataDir: existsSync(dataDir()),
    relayConnections: chain.relay.accepted,
    nodeCalls: chain.node.requests.length,
  });
  const settle = () => new Promise((r) => setTimeout(r, 150));

  it('createApp writes nothing, creates no directory and connects nowhere; close() without start() leaves it so', async () => {
    service = build();
    await settle();
    expect(footprint()).toEqual({ dataDir: false, relayConnections: 0, nodeCalls: 0 });
    // Status reads before start() answer "nothing yet" instead of failing.
    expect(service.scanner.status()).toMatchObject({ state: 'idle', start_height: null, scanned_height: null });
    expect(service.store.isOpen).toBe(false);
    await service.close();
    await service.close();
    await settle();
    expect(footprint()).toEqual({ dataDir: false, relayConnections: 0, nodeCalls: 0 });
    expect(readdirSync(chain.dir)).toEqual([]);
  });

  it('start() creates DATA_DIR (0700) with the keys and the database, connects the relay and scans; close() twice', async () => {
    service = build();
    await service.start();
    expect(statSync(dataDir()).mode & 0o777).toBe(0o700);
    expect(readdirSync(dataDir())).toEqual(
      expect.arrayContaining([DATABASE_FILE, KEY_FILES.scanKey, KEY_FILES.spendPub, KEY_FILES.spendSecret]),
    );
    expect(statSync(join(dataDir(), DATABASE_FILE)).mode & 0o777).toBe(0o600);
    await waitFor(() => service!.scanner.status().state === 'synced', 10_000, 'the first scan');
    await waitFor(() => chain.relay.accepted === 1, 5_000, 'the relay connection');
    expect(service.store.isOpen).toBe(true);
    const first = service.close();
    const second = service.close();
    expect(second).toBe(first);
    await first;
    expect(service.store.isOpen).toBe(false);
    // Stopped: no more calls to the node.
    const calls = chain.node.requests.length;
    await settle();
    expect(chain.node.requests.length).toBe(calls);
    expect(service.scanner.status().state).toBe('stopped');
  });

  it('before start() the API answers 503 for the database and /health works; start() then serves it', async () => {
    service = build();
    const { port } = await listen(service.servers.http, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}`;
    expect(await getJson(url, '/payments')).toEqual({
      status: 503,
      body: { error: 'the service is starting', code: 'SERVICE_UNAVAILABLE', details: 'the database is not open yet' },
    });
    expect(await getJson(url, '/health')).toMatchObject({ status: 200, body: { scanner: { scanned_height: null } } });
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('silent_payments_scanner_state{state="idle"} 1');
    expect(existsSync(dataDir())).toBe(false);
    await service.start();
    expect(await getJson(url, '/payments')).toMatchObject({ status: 200, body: { payments: [], total: 0 } });
    await closeGracefully(service.servers.http, 100);
  });

  it('a start() that fails half-way (the database of other keys) is cleaned up by close()', async () => {
    const first = build();
    await first.start();
    await waitFor(() => chain.relay.accepted === 1, 5_000, 'the relay connection');
    await first.close();
    // Other keys on the same DATA_DIR: the database refuses them once opened.
    rmSync(join(dataDir(), KEY_FILES.scanKey));
    rmSync(join(dataDir(), KEY_FILES.spendPub));
    rmSync(join(dataDir(), KEY_FILES.spendSecret));
    service = build();
    await expect(service.start()).rejects.toThrow(/made for another key set/);
    expect(service.store.isOpen).toBe(true);
    await service.close();
    await service.close();
    expect(service.store.isOpen).toBe(false);
    // The failed start never connected the relay.
    await settle();
    expect(chain.relay.accepted).toBe(1);
  });
});

describe('silent-payments entry point', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  /** A DATA_DIR anyone may enter, holding a database the test made. */
  const dataDirWith = (database: (file: string) => void): { dir: string; file: string } => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-entry-'));
    dirs.push(dir);
    chmodSync(dir, 0o777);
    const file = join(dir, DATABASE_FILE);
    database(file);
    return { dir, file };
  };
  /** A start that stops with exit 1 and one fatal line holding `text`: no stack trace, never listening. */
  const refused = (text: string) => ({ code: 1, fatal: [expect.stringContaining(text)], listened: false, stack: false });
  const runMain = (env: Record<string, string>, user?: ProcessUser) =>
    runStart({
      cwd: join(__dirname, '..'),
      env: {
        PORT: '0',
        SP_NETWORK: 'regtest',
        SP_SCAN_KEY: '01'.repeat(32),
        SP_SPEND_PUBKEY: '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
        CHAIN_RPC_USER: 'user',
        CHAIN_RPC_PASSWORD: 'password',
        SCANNER_ENABLED: 'false',
        ...env,
      },
      user,
      listening: 'silent-payments listening',
    });

  it('exits 1 with one fatal line naming the database file when it is not a SQLite database', async () => {
    const { dir, file } = dataDirWith((path) => writeFileSync(path, 'not a database, but a file of the same name'.repeat(100)));
    expect(await runMain({ DATA_DIR: dir })).toMatchObject(
      refused(`cannot open the SQLite file ${file} (DATA_DIR): file is not a database`),
    );
  }, 20_000);

  // As root, the child runs as nobody (unprivilegedUser), who cannot write root's 0444 file.
  itAsUnprivileged(
    'exits 1 with one fatal line saying the database is read-only, instead of serving and failing every scan',
    async (user) => {
      const { dir, file } = dataDirWith((path) => {
        // SQLite's close runs at once (its promise is settled)
        void openStore(path).close();
        chmodSync(path, 0o444);
      });
      expect(await runMain({ DATA_DIR: dir }, user)).toMatchObject(
        refused(`cannot open the SQLite file ${file} (DATA_DIR): it can be read but not written by this process`),
      );
    },
    20_000,
  );
});
