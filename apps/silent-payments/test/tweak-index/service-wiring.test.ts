import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildSilentPayment, plainScript, startChainDouble, type ChainDouble } from '@repo/chain-double';
import Database from 'better-sqlite3';
import { createMemoryLogger, createSilentLogger } from '@repo/service';
import { createApp, type SilentPaymentsService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { INDEX_DATABASE_FILE } from '../../src/tweak-index/config';
import { waitFor } from '../support/fake-relay';
import { chainDoubleEnv } from '../support/service';

// INDEX_ENABLED through the service as operators start it (src/app.ts): the index's listeners,
// GET /info, and the scanner's block pass feeding it (docs/silent-payments.md, "The tweak index
// (light wallets)"). The consumer itself is tested in scanner-feed.test.ts; this catches a wiring
// that builds the index but never feeds it.
describe('the service with INDEX_ENABLED', () => {
  let node: ChainDouble;
  let dir: string;
  let service: SilentPaymentsService | undefined;
  beforeAll(async () => {
    node = await startChainDouble({ user: 'u', password: 'p', chain: 'regtest' });
  });
  afterAll(() => node.close());
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-index-wiring-'));
  });
  /** The service as operators start it with the index on, against the double; `extra` on top. */
  const indexedConfig = (extra: Record<string, string>) =>
    loadConfig({
      ...chainDoubleEnv(node.url, dir),
      INDEX_ENABLED: 'true',
      INDEX_GRPC_PORT: '0',
      ELECTRUM_PORT: '0',
      ...extra,
    });
  afterEach(async () => {
    await service?.close();
    service = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves GET /info from an index the block pass keeps at the tip, from SP_INDEX_START_HEIGHT', async () => {
    const indexStart = node.tipHeight() + 1;
    node.mine(3);
    const config = indexedConfig({
      SP_START_HEIGHT: String(indexStart + 2),
      SP_INDEX_START_HEIGHT: String(indexStart),
      SCAN_MEMPOOL: 'false',
    });
    service = createApp(config, { logger: createSilentLogger() });
    await service.start();
    const tip = node.tipHeight();
    await waitFor(() => service!.scanner.status().scanned_height === tip, 20_000, 'the catch-up');
    // The scanner started above the index's start: the two blocks below came from the node.
    const info = await request(service.app).get('/info').expect(200);
    expect(info.body).toMatchObject({ network: 'regtest', height: tip });
  });

  it('drops an index of the row-per-transaction layout at start, says so, and builds it again from the node', async () => {
    const indexStart = node.tipHeight() + 1;
    node.mine(2);
    mkdirSync(dir, { recursive: true });
    const old = new Database(join(dir, INDEX_DATABASE_FILE));
    old.exec(
      'CREATE TABLE idx_blocks (height INTEGER PRIMARY KEY); CREATE TABLE idx_txs (height INTEGER); INSERT INTO idx_blocks VALUES (1)',
    );
    old.close();
    const memory = createMemoryLogger();
    service = createApp(indexedConfig({ SP_START_HEIGHT: String(indexStart), SCAN_MEMPOOL: 'false' }), { logger: memory.logger });
    await service.start();
    expect(memory.lines.filter((l) => String(l.msg).includes('tables of an earlier layout were dropped'))).toHaveLength(1);
    const tip = node.tipHeight();
    await waitFor(() => service!.scanner.status().scanned_height === tip, 20_000, 'the catch-up');
    expect((await service.tweakIndex!.indexer.store.blocks(0, tip)).map((b) => b.height)).toEqual([indexStart, indexStart + 1]);
  });

  it('indexes the mempool from the scanner’s mempool pass, and forgets a transaction once mined', async () => {
    const config = indexedConfig({ SP_START_HEIGHT: String(node.tipHeight()), SCAN_POLL_INTERVAL_MS: '50' });
    service = createApp(config, { logger: createSilentLogger() });
    await service.start();
    const index = service.tweakIndex!.indexer;
    const paying = buildSilentPayment([node.fund('p2wpkh')], [{ address: service.book.baseAddress, sats: 50_000n }], plainScript(3));
    node.sendRawTransaction(paying.hex);
    await waitFor(() => index.mempool.has(paying.txid), 20_000, 'the transaction in the mempool index');
    expect(index.mempool.rows().find((row) => row.txid === paying.txid)).toMatchObject({ height: 0 });
    node.mine(1);
    const tip = node.tipHeight();
    // The scanner's progress commits only after the index took the block (its consumer's prepare).
    await waitFor(() => service!.scanner.status().scanned_height === tip && !index.mempool.has(paying.txid), 20_000, 'the block indexed');
    expect((await index.store.txs(tip, tip)).map((t) => t.txid)).toContain(paying.txid);
  });

  it('tells the index’s listeners of a mempool transaction that left unmined (a conflicting one was mined)', async () => {
    const config = indexedConfig({ SP_START_HEIGHT: String(node.tipHeight()), SCAN_POLL_INTERVAL_MS: '50' });
    service = createApp(config, { logger: createSilentLogger() });
    await service.start();
    const index = service.tweakIndex!.indexer;
    const coin = node.fund('p2wpkh');
    const paying = buildSilentPayment([coin], [{ address: service.book.baseAddress, sats: 50_000n }], plainScript(3));
    node.sendRawTransaction(paying.hex);
    await waitFor(() => index.mempool.has(paying.txid), 20_000, 'the transaction in the mempool index');
    const gone = new Promise<string[]>((resolve) => index.events.once('mempool-gone', resolve));
    const rival = buildSilentPayment([coin], [{ address: service.book.baseAddress, sats: 40_000n }], plainScript(3));
    node.mine(1, [rival.hex]);
    expect(await gone).toEqual([paying.txid]);
    expect(index.mempool.has(paying.txid)).toBe(false);
  });
});
