import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { buildSilentPayment, plainScript, startChainDouble, type ChainDouble } from '@repo/chain-double';
import { createMemoryLogger, createSilentLogger } from '@repo/service';
import { satsToBtc } from '../src/amount';
import { createApp, DATABASE_FILE, type SilentPaymentsService } from '../src/app';
import { loadConfig } from '../src/config';
import { waitFor } from './support/fake-relay';
import { chainDoubleEnv } from './support/service';
import { startTestPostgres, type TestPostgres } from './tweak-index/support/postgres';

// DATABASE_URL through the service as operators start it (src/app.ts): the service's own labels,
// payments and progress go to PostgreSQL (docs/silent-payments.md, "Where the data lives"), and
// survive a restart; nothing of them is written under DATA_DIR.
describe('the service with DATABASE_URL', () => {
  let pg: TestPostgres;
  let node: ChainDouble;
  let dir: string;
  let service: SilentPaymentsService | undefined;
  beforeAll(async () => {
    [pg, node] = await Promise.all([startTestPostgres(), startChainDouble({ user: 'u', password: 'p', chain: 'regtest' })]);
  }, 60_000);
  afterAll(async () => {
    await node.close();
    await pg.stop();
  }, 60_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-payments-pg-'));
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...chainDoubleEnv(node.url, dir),
    SCAN_MEMPOOL: 'false',
    SCAN_POLL_INTERVAL_MS: '50',
    DATABASE_URL: pg.url,
    ...extra,
  });
  const start = async (extra: Record<string, string> = {}) => {
    service = createApp(loadConfig(env(extra)), { logger: createSilentLogger() });
    await service.start();
    return service;
  };
  const rowsOf = async (wallet: string): Promise<number> => {
    const client = new Client({ connectionString: pg.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM sp_payments WHERE wallet = $1', [wallet]);
      return Number(rows[0]!.n);
    } finally {
      await client.end();
    }
  };

  it('stores a received payment in PostgreSQL, serves it on GET /payments and GET /balance, and still after a restart', async () => {
    const funding = node.fund('p2wpkh');
    const first = node.tipHeight() + 1;
    let running = await start({ SP_START_HEIGHT: String(first) });
    expect(running.store.kind).toBe('postgres');
    const sats = 1_234_567n;
    const paid = buildSilentPayment([funding], [{ address: running.book.baseAddress, sats }], plainScript(4));
    node.mine(1, [paid.hex]);
    await waitFor(() => running.scanner.status().scanned_height === first, 20_000, 'the block of the payment');

    const expectServed = async (app: SilentPaymentsService['app']) => {
      const list = await request(app).get('/payments').expect(200);
      expect(list.body).toMatchObject({
        total: 1,
        payments: [{ id: `${paid.txid}:0`, txid: paid.txid, amount: satsToBtc(sats), block_height: first }],
      });
      const balance = await request(app).get('/balance').expect(200);
      expect(balance.body).toEqual({ confirmed: satsToBtc(sats), pending: 0, spent_pending: 0, utxo_count: 1 });
      return list.body as { payments: Array<{ created_at: string }> };
    };
    const before = await expectServed(running.app);
    expect(await rowsOf(running.book.baseAddress)).toBe(1);
    // the service's own SQLite file is never created: its data went to PostgreSQL
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(false);

    await running.close();
    service = undefined;
    running = await start();
    // the progress came back from PostgreSQL: the scan resumes after the block, nothing scanned again
    expect(running.store.progress()).toEqual({ startHeight: first, scannedHeight: first });
    const after = await expectServed(running.app);
    expect(after.payments[0]!.created_at).toBe(before.payments[0]!.created_at);
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(false);
  });

  it('keeps the payments of another service sharing the database apart', async () => {
    const funding = node.fund('p2wpkh');
    const first = node.tipHeight() + 1;
    const one = await start({ SP_START_HEIGHT: String(first) });
    const paid = buildSilentPayment([funding], [{ address: one.book.baseAddress, sats: 50_000n }], plainScript(5));
    node.mine(1, [paid.hex]);
    await waitFor(() => one.scanner.status().scanned_height === first, 20_000, 'the first service');
    await one.close();
    service = undefined;
    // other keys (a DATA_DIR of its own, a key set generated there), the same database
    const otherDir = mkdtempSync(join(tmpdir(), 'sp-payments-pg-other-'));
    try {
      service = createApp(loadConfig(env({ DATA_DIR: otherDir, SP_START_HEIGHT: String(first) })), { logger: createSilentLogger() });
      const other = service;
      await other.start();
      expect(other.book.baseAddress).not.toBe(one.book.baseAddress);
      await waitFor(() => other.scanner.status().scanned_height === first, 20_000, 'the other service');
      await request(other.app).get('/payments').expect(200, { payments: [], total: 0, limit: 10, offset: 0 });
      expect(await rowsOf(one.book.baseAddress)).toBe(1);
    } finally {
      await service?.close();
      service = undefined;
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('warns at start that a silent-payments.sqlite left in DATA_DIR is not read', async () => {
    writeFileSync(join(dir, DATABASE_FILE), '');
    const memory = createMemoryLogger('info');
    service = createApp(loadConfig(env()), { logger: memory.logger });
    await service.start();
    expect(memory.lines.filter((l) => l.level === 40 && String(l.msg).startsWith('DATABASE_URL is set'))).toEqual([
      expect.objectContaining({ file: join(dir, DATABASE_FILE) }),
    ]);
  });
});
