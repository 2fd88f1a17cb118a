import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { decodeSilentPaymentAddress, labeledSpendPub } from '@repo/bip352';
import { bytesToHex } from '@repo/crypto';
import { closeGracefully, createSilentLogger, listen } from '@repo/service';
import { createApp, type SilentPaymentsService } from '../src/app';
import { contract } from './support/contract';
import { offlineEnv } from './support/service';
import { loadConfig, PAYMENTS_MAX_LIMIT, LABEL_MAX_LENGTH } from '../src/config';
import type { NewPayment } from '../src/store';

async function build(dataDir: string, env: Record<string, string> = {}): Promise<SilentPaymentsService> {
  // No scanner and no node: these tests drive the HTTP API and the store only.
  const config = loadConfig(offlineEnv(dataDir, env));
  const service = createApp(config, { logger: createSilentLogger() });
  await service.start();
  contract.attach(service.servers.http);
  return service;
}

function newPayment(txid: string, vout: number, address: string, amountSats: bigint): NewPayment {
  return { txid, vout, address, labelM: 1, amountSats, outputKey: 'aa'.repeat(32), tweak: 'bb'.repeat(32) };
}

describe('silent-payments HTTP API', () => {
  let dir: string;
  let service: SilentPaymentsService;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-api-'));
    service = await build(dir);
  });
  afterEach(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('GET /health', () => {
    it('answers the health record with the scanner progress', async () => {
      const res = await request(contract.server(service.app)).get('/health');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'healthy', version: '1.0.0', network: 'signet' });
      expect(new Date(res.body.timestamp as string).toISOString()).toBe(res.body.timestamp);
      expect(res.body.scanner).toMatchObject({ enabled: false, scanned_height: null, tip_height: null, blocks_per_second: 0 });
      expect(res.body.relay).toMatchObject({ configured: false });
    });
  });

  describe('POST /generate-address', () => {
    it('answers 201 with a labelled tsp address, then 200 with the same record', async () => {
      const first = await request(contract.server(service.app)).post('/generate-address').send({ label: 'order-42', amount: 0.015 });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        address: expect.stringMatching(/^tsp1/),
        label: 'order-42',
        amount: 0.015,
        created_at: expect.any(String),
      });
      const decoded = decodeSilentPaymentAddress(first.body.address as string);
      const { keys } = service;
      expect(bytesToHex(decoded.scanPub)).toBe(bytesToHex(keys.scanPub));
      // Label m = 1 (m = 0 is change): B_1 = B_spend + hash(b_scan || 1)·G.
      expect(bytesToHex(decoded.spendPub)).toBe(bytesToHex(labeledSpendPub(keys.scanPriv, keys.spendPub, 1)));
      const again = await request(contract.server(service.app)).post('/generate-address').send({ label: 'order-42', amount: 2 });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const other = await request(contract.server(service.app)).post('/generate-address').send({ label: 'order-43', amount: 1 });
      expect(other.status).toBe(201);
      expect(other.body.address).not.toBe(first.body.address);
      expect(other.body.address).not.toBe(service.book.changeAddress);
    });

    it('keeps labels across a restart and scans for them again', async () => {
      const first = await request(contract.server(service.app)).post('/generate-address').send({ label: 'kept', amount: 1 });
      await service.close();
      service = await build(dir);
      const again = await request(contract.server(service.app)).post('/generate-address').send({ label: 'kept', amount: 1 });
      expect(again.status).toBe(200);
      expect(again.body.address).toBe(first.body.address);
      expect(service.book.receiver.labels()).toEqual([0, 1]);
    });

    it('gives sp addresses on mainnet', async () => {
      const mainDir = mkdtempSync(join(tmpdir(), 'sp-api-main-'));
      const main = await build(mainDir, { SP_NETWORK: 'mainnet' });
      try {
        const res = await request(main.app).post('/generate-address').send({ label: 'a', amount: 1 });
        expect(res.body.address).toMatch(/^sp1/);
      } finally {
        await main.close();
        rmSync(mainDir, { recursive: true, force: true });
      }
    });

    it.each([
      ['no label', { amount: 1 }, 'label is required'],
      ['an empty label', { label: '   ', amount: 1 }, 'label must not be empty'],
      ['a label that is not a string', { label: 7, amount: 1 }, 'label must be a string'],
      ['a label too long', { label: 'x'.repeat(LABEL_MAX_LENGTH + 1), amount: 1 }, `at most ${LABEL_MAX_LENGTH} characters`],
      ['a label with control characters', { label: 'a\nb', amount: 1 }, 'control or format characters'],
      ['no amount', { label: 'a' }, 'amount is required'],
      ['a zero amount', { label: 'a', amount: 0 }, 'amount must be positive'],
      ['a negative amount', { label: 'a', amount: -0.1 }, 'amount must be positive'],
      ['nine decimals', { label: 'a', amount: 0.123456789 }, 'at most 8 decimals'],
      ['an amount as a string', { label: 'a', amount: '0.1' }, 'amount must be a number'],
      ['more than 21 million BTC', { label: 'a', amount: 21_000_001 }, 'at most 21000000'],
      ['an array body', [1, 2], 'body must be a JSON object'],
    ])('answers 400 for %s', async (_name, body, message) => {
      const res = await request(contract.server(service.app)).post('/generate-address').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(message);
      expect(typeof res.body.code).toBe('string');
      expect(Object.keys(res.body as object).every((k) => ['error', 'code', 'details'].includes(k))).toBe(true);
    });

    it('answers 400 for malformed JSON and when the body is not JSON', async () => {
      const bad = await request(contract.server(service.app))
        .post('/generate-address')
        .set('Content-Type', 'application/json')
        .send('{"label":');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'malformed JSON body', code: 'INVALID_REQUEST' });
      const text = await request(contract.server(service.app)).post('/generate-address').set('Content-Type', 'text/plain').send('label=a');
      expect(text.status).toBe(400);
      expect(text.body.code).toBe('INVALID_REQUEST');
    });

    it('answers 413 past the body limit', async () => {
      await service.close();
      service = await build(dir, { MAX_BODY_BYTES: '1024' });
      const res = await request(contract.server(service.app))
        .post('/generate-address')
        .send({ label: 'x'.repeat(2000), amount: 1 });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'request body too large', code: 'PAYLOAD_TOO_LARGE' });
    });
  });

  describe('GET /payments', () => {
    async function seed(count: number): Promise<void> {
      await service.store.initProgress(100, 'ff'.repeat(32));
      for (let i = 0; i < count; i++) {
        const txid = i.toString(16).padStart(64, '0');
        await service.store.applyBlock({ height: 100 + i, hash: txid }, [newPayment(txid, i % 3, `tsp1address${i}`, BigInt(1000 + i))]);
      }
    }

    it('answers the first 10 payments, newest block first, with total, limit and offset', async () => {
      await seed(12);
      const res = await request(contract.server(service.app)).get('/payments');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 12, limit: 10, offset: 0 });
      expect(res.body.payments).toHaveLength(10);
      expect(res.body.payments[0]).toEqual({
        id: `${(11).toString(16).padStart(64, '0')}:2`,
        address: 'tsp1address11',
        amount: 0.00001011,
        txid: (11).toString(16).padStart(64, '0'),
        vout: 2,
        block_height: 111,
        created_at: expect.any(String),
        spent: false,
      });
      const page = await request(contract.server(service.app)).get('/payments?limit=5&offset=10');
      expect(page.body.payments.map((p: { block_height: number }) => p.block_height)).toEqual([101, 100]);
      expect(page.body).toMatchObject({ total: 12, limit: 5, offset: 10 });
    });

    it.each([['limit=0'], [`limit=${PAYMENTS_MAX_LIMIT + 1}`], ['limit=abc'], ['offset=-1'], ['limit=1.5'], ['limit=1&limit=2']])(
      'answers 400 for %s',
      async (query) => {
        const res = await request(contract.server(service.app)).get(`/payments?${query}`);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringMatching(/^(limit|offset) must be an integer/) });
      },
    );
  });

  describe('GET /payments filters, GET /balance', () => {
    it('filters by status, spent and label, and totals the balance', async () => {
      const order = (await request(contract.server(service.app)).post('/generate-address').send({ label: 'order-1', amount: 0.0001 })).body;
      await service.store.initProgress(10, 'ee'.repeat(32));
      // m = 1 is order-1 (newPayment's label index).
      await service.store.applyBlock({ height: 10, hash: '10'.repeat(32) }, [
        newPayment('01'.repeat(32), 0, order.address, 10_000n),
        { ...newPayment('02'.repeat(32), 0, 'tsp1base', 20_000n), labelM: null },
      ]);
      await service.store.addPending([newPayment('03'.repeat(32), 0, order.address, 5_000n)]);
      await service.store.markSpentPending([{ id: `${'02'.repeat(32)}:0`, spentTxid: '04'.repeat(32) }]);
      const ids = async (query: string) =>
        ((await request(contract.server(service.app)).get(`/payments?${query}`)).body.payments as { id: string }[]).map((p) =>
          p.id.slice(0, 2),
        );
      expect(await ids('status=pending')).toEqual(['03']);
      expect(await ids('status=confirmed')).toEqual(['01', '02']);
      expect(await ids('spent=true')).toEqual(['02']);
      expect(await ids('spent=false')).toEqual(['03', '01']);
      expect(await ids('label=order-1&status=confirmed')).toEqual(['01']);
      expect((await request(contract.server(service.app)).get('/payments?label=order-1')).body).toMatchObject({ total: 2 });
      expect((await request(contract.server(service.app)).get('/payments?label=unknown')).body).toMatchObject({ payments: [], total: 0 });
      expect((await request(contract.server(service.app)).get('/balance')).body).toEqual({
        confirmed: 0.0001,
        pending: 0.00005,
        spent_pending: 0.0002,
        utxo_count: 2,
      });
    });

    it.each([
      ['status=spent'],
      ['spent=yes'],
      ['spent=1'],
      ['label='],
      [`label=${'x'.repeat(LABEL_MAX_LENGTH + 1)}`],
      ['status=a&status=b'],
    ])('answers 400 for %s', async (query) => {
      const res = await request(contract.server(service.app)).get(`/payments?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringMatching(/^(status|spent|label) must be/) });
    });

    it('answers a zero balance with no payments', async () => {
      expect((await request(contract.server(service.app)).get('/balance')).body).toEqual({
        confirmed: 0,
        pending: 0,
        spent_pending: 0,
        utxo_count: 0,
      });
    });
  });

  describe('GET /labels', () => {
    async function invoice(label: string, amount: number): Promise<string> {
      return (await request(contract.server(service.app)).post('/generate-address').send({ label, amount })).body.address as string;
    }

    it('answers each status as payments arrive, 404 for an unknown label, and lists labels paged', async () => {
      const address = await invoice('order-7', 0.0003);
      const get = async () => (await request(contract.server(service.app)).get('/labels/order-7')).body;
      expect(await get()).toEqual({
        label: 'order-7',
        address,
        amount: 0.0003,
        received: 0,
        pending: 0,
        status: 'unpaid',
        created_at: expect.any(String),
        payments: [],
      });
      await service.store.initProgress(5, 'ee'.repeat(32));
      await service.store.addPending([newPayment('01'.repeat(32), 0, address, 10_000n)]);
      expect(await get()).toMatchObject({ received: 0, pending: 0.0001, status: 'pending', payments: [`${'01'.repeat(32)}:0`] });
      await service.store.applyBlock({ height: 5, hash: '05'.repeat(32) }, [newPayment('01'.repeat(32), 0, address, 10_000n)]);
      expect(await get()).toMatchObject({ received: 0.0001, pending: 0, status: 'partial' });
      await service.store.applyBlock({ height: 6, hash: '06'.repeat(32) }, [newPayment('02'.repeat(32), 0, address, 20_000n)]);
      expect(await get()).toMatchObject({ received: 0.0003, status: 'paid' });
      await service.store.applyBlock({ height: 7, hash: '07'.repeat(32) }, [newPayment('03'.repeat(32), 0, address, 1n)]);
      expect(await get()).toMatchObject({ received: 0.00030001, status: 'overpaid' });

      const missing = await request(contract.server(service.app)).get('/labels/nope');
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ code: 'NOT_FOUND', error: 'label not found' });

      await invoice('order-8', 1);
      await invoice('order 9/é', 2);
      const page = await request(contract.server(service.app)).get('/labels?limit=2&offset=1');
      expect(page.body).toMatchObject({ total: 3, limit: 2, offset: 1 });
      expect(page.body.labels.map((l: { label: string; status: string }) => [l.label, l.status])).toEqual([
        ['order-8', 'unpaid'],
        ['order 9/é', 'unpaid'],
      ]);
      expect((await request(contract.server(service.app)).get(`/labels/${encodeURIComponent('order 9/é')}`)).body).toMatchObject({
        amount: 2,
      });
      expect((await request(contract.server(service.app)).get('/labels?limit=0')).status).toBe(400);
    });

    it('counts an amount within INVOICE_TOLERANCE_SATS as paid', async () => {
      await service.close();
      service = await build(dir, { INVOICE_TOLERANCE_SATS: '100' });
      const address = await invoice('tolerant', 0.001);
      await service.store.initProgress(5, 'ee'.repeat(32));
      await service.store.applyBlock({ height: 5, hash: '05'.repeat(32) }, [newPayment('01'.repeat(32), 0, address, 99_900n)]);
      expect((await request(contract.server(service.app)).get('/labels/tolerant')).body).toMatchObject({
        status: 'paid',
        received: 0.000999,
      });
      // 99,900 + 201 = 100,101 sats: past 100,000 + 100.
      await service.store.applyBlock({ height: 6, hash: '06'.repeat(32) }, [newPayment('02'.repeat(32), 0, address, 201n)]);
      expect((await request(contract.server(service.app)).get('/labels/tolerant')).body).toMatchObject({ status: 'overpaid' });
    });
  });

  describe('POST /psbt', () => {
    const to = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
    async function seed(): Promise<string[]> {
      await service.store.initProgress(10, 'ee'.repeat(32));
      await service.store.applyBlock({ height: 10, hash: '10'.repeat(32) }, [
        newPayment('01'.repeat(32), 0, 'tsp1a', 100_000n),
        newPayment('02'.repeat(32), 1, 'tsp1b', 50_000n),
      ]);
      await service.store.addPending([newPayment('03'.repeat(32), 0, 'tsp1c', 70_000n)]);
      return [`${'01'.repeat(32)}:0`, `${'02'.repeat(32)}:1`];
    }

    it('answers a base64 PSBT spending every confirmed unspent output by default, with the fee for the signed size', async () => {
      const ids = await seed();
      const res = await request(contract.server(service.app)).post('/psbt').send({ to, fee_rate: 2 });
      expect(res.status).toBe(200);
      // 2 taproot key-path inputs and one P2WPKH output: 123 non-witness and 134 witness bytes, 626 WU: 157 vB.
      expect(res.body).toEqual({
        psbt: expect.stringMatching(/^cHNidP8B/),
        ids: [ids[0], ids[1]],
        to,
        input_total: 0.0015,
        amount: (150_000 - 314) / 1e8,
        fee: 0.00000314,
        fee_rate: 2,
        vsize: 157,
      });
      const one = await request(contract.server(service.app))
        .post('/psbt')
        .send({ to, fee_rate: 1, ids: [ids[0]] });
      expect(one.body).toMatchObject({ ids: [ids[0]], vsize: 99, fee: 0.00000099 });
    });

    it.each([
      [{ fee_rate: 1 }, 'to is required'],
      [{ to }, 'fee_rate is required'],
      [{ to: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', fee_rate: 1 }, '"to" is not a valid signet address'],
      [{ to, fee_rate: 0.5 }, 'fee_rate must be a number from 1 to 10000 (sat/vB)'],
      [{ to, fee_rate: 10_001 }, 'fee_rate must be a number from 1 to 10000 (sat/vB)'],
      [{ to, fee_rate: '5' }, 'fee_rate must be a number from 1 to 10000 (sat/vB)'],
      [{ to, fee_rate: 1, ids: [`${'09'.repeat(32)}:0`] }, `unknown payment id ${'09'.repeat(32)}:0`],
      [{ to, fee_rate: 1, ids: [`${'03'.repeat(32)}:0`] }, `payment ${'03'.repeat(32)}:0 is not confirmed yet`],
      [{ to, fee_rate: 1, ids: [] }, 'ids must be a non-empty array of payment ids (<txid>:<vout>)'],
      [{ to, fee_rate: 1000 }, 'the outputs (150000 sats) are worth less than the fee (157000 sats) plus dust (294 sats)'],
    ])('answers 400 for %j', async (body, error) => {
      await seed();
      const res = await request(contract.server(service.app)).post('/psbt').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error });
    });

    it('answers 400 for a spent output and when nothing is left to sweep', async () => {
      const ids = await seed();
      await service.store.applyBlock({ height: 11, hash: '11'.repeat(32) }, [], [{ id: ids[0]!, spentTxid: 'ab'.repeat(32) }]);
      const spent = await request(contract.server(service.app)).post('/psbt').send({ to, fee_rate: 1, ids });
      expect(spent.status).toBe(400);
      expect(spent.body.error).toBe(`payment ${ids[0]} is already spent by ${'ab'.repeat(32)}`);
      await service.store.applyBlock({ height: 12, hash: '12'.repeat(32) }, [], [{ id: ids[1]!, spentTxid: 'ab'.repeat(32) }]);
      const none = await request(contract.server(service.app)).post('/psbt').send({ to, fee_rate: 1 });
      expect(none.body).toMatchObject({ code: 'INVALID_REQUEST', error: 'nothing to sweep: no confirmed unspent output' });
    });
  });

  describe('GET /payments/:id', () => {
    it('answers the detail with confirmations and status', async () => {
      await service.store.initProgress(200, 'ee'.repeat(32));
      const txid = 'cd'.repeat(32);
      await service.store.applyBlock({ height: 200, hash: '01'.repeat(32) }, [newPayment(txid, 1, 'tsp1paid', 150_000_000n)]);
      await service.store.applyBlock({ height: 201, hash: '02'.repeat(32) }, []);
      const res = await request(contract.server(service.app)).get(`/payments/${txid}:1`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: `${txid}:1`,
        address: 'tsp1paid',
        amount: 1.5,
        txid,
        vout: 1,
        block_height: 200,
        confirmations: 2,
        status: 'confirmed',
        created_at: expect.any(String),
        output_key: 'aa'.repeat(32),
        tweak: 'bb'.repeat(32),
        label: null,
        spent: false,
        spent_txid: null,
        spent_height: null,
      });
      // Spent in a block: spent, with the spending txid and height.
      await service.store.applyBlock({ height: 202, hash: '03'.repeat(32) }, [], [{ id: `${txid}:1`, spentTxid: 'ef'.repeat(32) }]);
      expect((await request(contract.server(service.app)).get(`/payments/${txid}:1`)).body).toMatchObject({
        spent: true,
        spent_txid: 'ef'.repeat(32),
        spent_height: 202,
      });
    });

    it('answers pending payments with 0 confirmations', async () => {
      await service.store.addPending([newPayment('ab'.repeat(32), 0, 'tsp1pending', 5000n)]);
      const res = await request(contract.server(service.app)).get(`/payments/${'ab'.repeat(32)}:0`);
      expect(res.body).toMatchObject({ status: 'pending', confirmations: 0, block_height: null });
    });

    it('answers 404 for an unknown id', async () => {
      const res = await request(contract.server(service.app)).get('/payments/nope');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'payment not found', code: 'NOT_FOUND' });
    });
  });

  describe('limits and unknown routes', () => {
    it('refuses connections past the per-address share of MAX_CONNECTIONS on the real server', async () => {
      await service.close();
      // 4 in all, one kept for new addresses: one address may hold 2.
      service = await build(dir, { MAX_CONNECTIONS: '4' });
      const { port } = await listen(service.servers.http, 0, '127.0.0.1');
      const sockets: Socket[] = [];
      const open = () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', reject);
          sockets.push(s);
        });
      try {
        await open();
        await open();
        await new Promise((r) => setTimeout(r, 50));
        const third = await open();
        await new Promise<void>((resolve) => third.once('close', () => resolve()));
        expect(service.connections.refused).toBe(1);
      } finally {
        for (const s of sockets) s.destroy();
        await closeGracefully(service.servers.http, 100);
      }
    });

    it('answers 404 for an unknown route', async () => {
      const res = await request(contract.server(service.app)).get('/nowhere');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    });

    it('answers 429 with Retry-After past the per-address rate limit, /health excepted', async () => {
      await service.close();
      service = await build(dir, { RATE_LIMIT_PER_MINUTE: '3' });
      for (let i = 0; i < 3; i++) expect((await request(contract.server(service.app)).get('/payments')).status).toBe(200);
      const refused = await request(contract.server(service.app)).get('/payments');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await request(contract.server(service.app)).get('/health')).status).toBe(200);
    });
  });
});
