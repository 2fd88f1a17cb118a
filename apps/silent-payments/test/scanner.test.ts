import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { closeGracefully, createMemoryLogger, listen } from '@repo/service';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@repo/crypto';
import { join } from 'node:path';
import { startChainDouble, type ChainDouble, type FundedOutput } from '@repo/chain-double';
import { waitFor, type FakeRelay } from './support/fake-relay';
import { buildSilentPayment, decodeTx, plainScript } from '@repo/chain-double';
import { openStore } from '../src/store';
import { getJson, postJson, startService, useChainDouble, type RunningService } from './support/service';
import { runCli } from '../src/cli';

interface PaymentDetail {
  output_key: string;
  tweak: string;
  label: string | null;
  spent: boolean;
  spent_txid: string | null;
  spent_height: number | null;
  id: string;
  address: string;
  amount: number;
  txid: string;
  vout: number;
  block_height: number | null;
  confirmations: number;
  status: string;
  created_at: string;
}

describe('scanner against the chain double', () => {
  const chain = useChainDouble('sp-scan-');
  let node: ChainDouble;
  let relay: FakeRelay;
  let dir: string;
  let running: RunningService | undefined;
  beforeEach(() => {
    ({ node, relay, dir } = chain);
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  const env = (extra: Record<string, string> = {}) => chain.env(extra);
  const scanned = () => running!.service.scanner.status().scanned_height;
  const synced = () =>
    waitFor(
      () => scanned() === node.tipHeight() && running!.service.scanner.status().state === 'synced',
      15_000,
      `scan to ${node.tipHeight()}`,
    );
  const payment = (id: string) => getJson<PaymentDetail>(running!.url, `/payments/${id}`);
  const address = async (label: string) =>
    (await postJson<{ address: string }>(running!.url, '/generate-address', { label, amount: 0.5 })).body.address;

  it('records payments through every input type, with labels, change and several outputs to one recipient', async () => {
    running = await startService(env());
    await synced();
    // The double has no waitfornewblock (-32601): new blocks are polled (SCAN_POLL_INTERVAL_MS).
    await waitFor(() => running!.service.scanner.longPollState() === 'unsupported', 5_000, 'the long poll refused');
    expect((await getJson<{ scanner: { long_poll: string } }>(running.url, '/health')).body.scanner.long_poll).toBe('unsupported');
    const book = running.service.book;
    const invoice1 = await address('invoice-1');
    const invoice2 = await address('invoice-2');
    const coins: Record<string, FundedOutput> = {
      p2tr: node.fund('p2tr'),
      p2wpkh: node.fund('p2wpkh'),
      p2sh: node.fund('p2sh-p2wpkh'),
      p2pkh: node.fund('p2pkh'),
      p2wpkh2: node.fund('p2wpkh'),
      p2pkh2: node.fund('p2pkh'),
    };
    const change = plainScript(7);
    const txs = [
      buildSilentPayment([coins.p2tr!], [{ address: book.baseAddress, sats: 20_000_000n }], change),
      buildSilentPayment([coins.p2wpkh!], [{ address: invoice1, sats: 30_000_000n }], change),
      buildSilentPayment(
        [coins.p2sh!],
        [
          { address: invoice2, sats: 25_000_000n },
          { address: book.changeAddress, sats: 10_000_000n },
        ],
        change,
      ),
      buildSilentPayment(
        [coins.p2pkh!],
        [
          { address: invoice1, sats: 10_000_000n },
          { address: invoice1, sats: 5_000_000n },
        ],
        change,
      ),
      // Two inputs, a plain output first, and three outputs to one B_scan under different labels.
      buildSilentPayment(
        [coins.p2wpkh2!, coins.p2pkh2!],
        [
          { script: plainScript(9), sats: 1_000_000n },
          { address: invoice2, sats: 12_345_678n },
          { address: book.baseAddress, sats: 1n * 10_000_000n },
          { address: invoice2, sats: 9_000n },
        ],
        change,
      ),
    ];
    const expected = [
      { tx: 0, vout: 0, address: book.baseAddress, amount: 0.2 },
      { tx: 1, vout: 0, address: invoice1, amount: 0.3 },
      { tx: 2, vout: 0, address: invoice2, amount: 0.25 },
      { tx: 2, vout: 1, address: book.changeAddress, amount: 0.1 },
      { tx: 3, vout: 0, address: invoice1, amount: 0.1 },
      { tx: 3, vout: 1, address: invoice1, amount: 0.05 },
      { tx: 4, vout: 1, address: invoice2, amount: 0.12345678 },
      { tx: 4, vout: 2, address: book.baseAddress, amount: 0.1 },
      { tx: 4, vout: 3, address: invoice2, amount: 0.00009 },
    ].map((e) => ({ ...e, id: `${txs[e.tx]!.txid}:${e.vout}` }));

    // In the mempool first: pending, 0 confirmations.
    for (const tx of txs) node.sendRawTransaction(tx.hex);
    await synced();
    await waitFor(async () => (await running!.service.store.countPayments()) === expected.length, 10_000, 'pending payments');
    const pending = await payment(expected[0]!.id);
    expect(pending.body).toMatchObject({ status: 'pending', confirmations: 0, block_height: null });

    const [blockHash] = node.mine(1);
    const height = node.tipHeight();
    await synced();
    for (const e of expected) {
      const { status, body } = await payment(e.id);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        txid: txs[e.tx]!.txid,
        vout: e.vout,
        address: e.address,
        amount: e.amount,
        block_height: height,
        confirmations: 1,
        status: 'confirmed',
      });
    }
    // Spend data: the output key is the output's, and b_spend + tweak (mod n) is its private key,
    // the label's tweak included for a labelled output (BIP-352, "Spending").
    const spendSecret = BigInt(`0x${readFileSync(join(dir, 'spend.secret'), 'utf8').trim()}`);
    const labelOf: Record<string, string | null> = {
      [book.baseAddress]: null,
      [book.changeAddress]: null,
      [invoice1]: 'invoice-1',
      [invoice2]: 'invoice-2',
    };
    for (const e of expected) {
      const { body } = await payment(e.id);
      const script = decodeTx(txs[e.tx]!.hex).outputs[e.vout]!.script;
      expect(body.output_key).toBe(bytesToHex(script.subarray(2)));
      expect(body.tweak).toMatch(/^[0-9a-f]{64}$/);
      const d = (spendSecret + BigInt(`0x${body.tweak}`)) % secp256k1.Point.CURVE().n;
      expect(bytesToHex(schnorr.getPublicKey(hexToBytes(d.toString(16).padStart(64, '0'))))).toBe(body.output_key);
      expect(body).toMatchObject({ label: labelOf[e.address], spent: false, spent_txid: null, spent_height: null });
    }
    const list = await getJson<{ payments: PaymentDetail[]; total: number }>(running.url, '/payments?limit=100');
    expect(list.body.total).toBe(expected.length);
    expect(list.body.payments.every((p) => (p as unknown as { spent: boolean }).spent === false)).toBe(true);
    expect(list.body.payments.map((p) => p.id).sort()).toEqual(expected.map((e) => e.id).sort());

    node.mine(2);
    await synced();
    expect((await payment(expected[0]!.id)).body.confirmations).toBe(3);

    // The events reach the relay with the publish token.
    await waitFor(
      () => relay.events.filter((e) => e.type === 'BlockScanned' && e.data.block_height === height + 2).length === 1,
      5_000,
      'events',
    );
    const received = relay.events.filter((e) => e.type === 'TransactionReceived');
    expect(received.map((e) => e.data)).toEqual(
      expect.arrayContaining(
        expected.map((e) => ({ txid: txs[e.tx]!.txid, amount: e.amount, address: e.address, block_height: height, confirmations: 1 })),
      ),
    );
    expect(received).toHaveLength(expected.length);
    const block = relay.events.find((e) => e.type === 'BlockScanned' && e.data.block_height === height);
    expect(block?.data).toEqual({
      block_height: height,
      block_hash: blockHash,
      transactions_count: txs.length + 1,
      silent_payments_found: expected.length,
    });
    expect(new Set(relay.events.map((e) => e.id)).size).toBe(relay.events.length);
  });

  it('rolls back the payments of orphaned blocks and finds them again when mined elsewhere', async () => {
    running = await startService(env());
    const invoice = await address('reorg');
    const coin = node.fund('p2tr');
    const other = node.fund('p2wpkh');
    const paid = buildSilentPayment([coin], [{ address: invoice, sats: 40_000_000n }], plainScript(1));
    const id = `${paid.txid}:0`;
    const [orphaned] = node.mine(1, [paid.hex]);
    const firstHeight = node.tipHeight();
    await synced();
    const first = (await payment(id)).body;
    expect(first).toMatchObject({ status: 'confirmed', block_height: firstHeight });

    // The block leaves the chain; its transaction returns to the mempool. It is the same payment,
    // first seen when it was: created_at does not move.
    await new Promise((resolve) => setTimeout(resolve, 5));
    node.reorg(1);
    await synced();
    expect((await payment(id)).body).toMatchObject({
      status: 'pending',
      block_height: null,
      confirmations: 0,
      created_at: first.created_at,
    });
    expect(await running.service.store.blockHash(firstHeight)).not.toBe(orphaned);
    expect(await running.service.store.blockHash(firstHeight + 1)).toBe(node.tipHash());

    node.mine(1);
    await synced();
    expect((await payment(id)).body).toMatchObject({
      status: 'confirmed',
      block_height: node.tipHeight(),
      confirmations: 1,
      created_at: first.created_at,
    });

    // A reorg whose replacement block double-spends the payment: it disappears.
    const paid2 = buildSilentPayment([other], [{ address: invoice, sats: 30_000_000n }], plainScript(2));
    node.mine(1, [paid2.hex]);
    await synced();
    expect((await payment(`${paid2.txid}:0`)).status).toBe(200);
    const conflict = buildSilentPayment([other], [{ script: plainScript(3), sats: 30_000_000n }], plainScript(2));
    node.reorg(1, [conflict.hex]);
    await synced();
    expect((await payment(`${paid2.txid}:0`)).status).toBe(404);
    expect((await payment(id)).body.status).toBe('confirmed');
    const heights = relay.events
      .filter((e) => e.type === 'TransactionReceived' && e.data.txid === paid.txid)
      .map((e) => e.data.block_height);
    expect(heights).toEqual([firstHeight, firstHeight + 2]);
    // PaymentReorged for each confirmed payment that left the chain, with the block it was in.
    expect(relay.events.filter((e) => e.type === 'PaymentReorged').map((e) => e.data)).toEqual([
      { txid: paid.txid, vout: 0, address: invoice, amount: 0.4, old_block_height: firstHeight, old_block_hash: orphaned },
      { txid: paid2.txid, vout: 0, address: invoice, amount: 0.3, old_block_height: firstHeight + 3, old_block_hash: expect.any(String) },
    ]);
  });

  it('sweeps with the offline signer after a restart; notices the spend in the mempool and in a block, and follows reorgs of the spend', async () => {
    running = await startService(env());
    await synced();
    const invoice = (await postJson<{ address: string }>(running.url, '/generate-address', { label: 'sweep-me', amount: 0.3 })).body
      .address;
    const paid = buildSilentPayment([node.fund('p2wpkh')], [{ address: invoice, sats: 30_000_000n }], plainScript(11));
    const id = `${paid.txid}:0`;
    node.sendRawTransaction(paid.hex);
    await waitFor(async () => (await running!.service.store.getPayment(id)) !== undefined, 10_000, 'the pending payment');
    expect((await getJson(running.url, '/labels/sweep-me')).body).toMatchObject({ status: 'pending', pending: 0.3, received: 0 });
    node.mine(1);
    await synced();
    expect((await getJson(running.url, '/labels/sweep-me')).body).toMatchObject({ status: 'paid', received: 0.3, payments: [id] });
    await waitFor(() => relay.events.some((e) => e.type === 'InvoicePaid'), 5_000, 'InvoicePaid');
    expect(relay.events.filter((e) => e.type === 'InvoicePaid').map((e) => e.data)).toEqual([
      { label: 'sweep-me', address: invoice, amount: 0.3, received: 0.3, status: 'paid' },
    ]);

    // Restarted: the spends below are noticed by a process that learns the payments' txids from the store.
    await running.close();
    running = await startService(env());
    await synced();

    // Sweep: the PSBT signed offline with spend.secret, broadcast, seen in the mempool.
    const psbt = await postJson<{ psbt: string; fee: number }>(running.url, '/psbt', {
      to: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080',
      fee_rate: 2,
    });
    expect(psbt.status).toBe(200);
    const out = { text: '', err: '' };
    const code = runCli(['sign', '--psbt', '-', '--spend-secret', join(dir, 'spend.secret')], {
      stdout: (t) => (out.text += t),
      stderr: (t) => (out.err += t),
      readStdin: () => Buffer.from(psbt.body.psbt),
      readFile: (path) => readFileSync(path),
    });
    expect({ code, err: out.err }).toEqual({ code: 0, err: '' });
    const sweepTxid = node.sendRawTransaction(out.text.trim());
    await waitFor(async () => (await running!.service.store.getPayment(id))?.spentTxid === sweepTxid, 10_000, 'the spend in the mempool');
    expect((await payment(id)).body).toMatchObject({ spent: true, spent_txid: sweepTxid, spent_height: null });
    expect((await getJson(running.url, '/balance')).body).toEqual({ confirmed: 0, pending: 0, spent_pending: 0.3, utxo_count: 0 });

    // Mined: spent at that height; the balance is zero.
    const [spendBlock] = node.mine(1);
    const spendHeight = node.tipHeight();
    await synced();
    expect((await payment(id)).body).toMatchObject({ spent: true, spent_txid: sweepTxid, spent_height: spendHeight });
    expect((await getJson(running.url, '/balance')).body).toEqual({ confirmed: 0, pending: 0, spent_pending: 0, utxo_count: 0 });
    expect((await getJson<{ total: number }>(running.url, '/payments?spent=true')).body.total).toBe(1);

    // The spending block leaves the chain, the spend goes back to the mempool: pending-spent.
    node.reorg(1);
    await synced();
    await waitFor(
      async () => (await running!.service.store.getPayment(id))?.spentTxid === sweepTxid,
      10_000,
      'the spend back in the mempool',
    );
    expect((await payment(id)).body).toMatchObject({ spent: true, spent_txid: sweepTxid, spent_height: null, status: 'confirmed' });
    expect(await running.service.store.blockHash(spendHeight)).not.toBe(spendBlock);

    // Mined again on the new branch: spent at the new height.
    node.mine(1);
    await synced();
    expect((await payment(id)).body).toMatchObject({ spent: true, spent_height: node.tipHeight() });
    await waitFor(() => relay.events.filter((e) => e.type === 'PaymentSpent').length >= 4, 5_000, 'PaymentSpent events');
    expect(relay.events.filter((e) => e.type === 'PaymentSpent').map((e) => e.data)).toEqual([
      { txid: paid.txid, vout: 0, spent_txid: sweepTxid, block_height: null },
      { txid: paid.txid, vout: 0, spent_txid: sweepTxid, block_height: spendHeight },
      { txid: paid.txid, vout: 0, spent_txid: sweepTxid, block_height: null },
      { txid: paid.txid, vout: 0, spent_txid: sweepTxid, block_height: node.tipHeight() },
    ]);
  });

  it('makes an output unspent again when its spend leaves the chain and the mempool', async () => {
    running = await startService(env({ SCAN_MEMPOOL: 'false' }));
    await synced();
    const base = running.service.book.baseAddress;
    const paid = buildSilentPayment([node.fund('p2tr')], [{ address: base, sats: 10_000_000n }], plainScript(12));
    node.mine(1, [paid.hex]);
    await synced();
    const id = `${paid.txid}:0`;
    const psbt = await postJson<{ psbt: string }>(running.url, '/psbt', {
      to: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080',
      fee_rate: 1,
      ids: [id],
    });
    let hex = '';
    runCli(['sign', '--psbt', '-', '--spend-secret', join(dir, 'spend.secret')], {
      stdout: (t) => (hex += t),
      stderr: () => undefined,
      readStdin: () => Buffer.from(psbt.body.psbt),
      readFile: (path) => readFileSync(path),
    });
    node.mine(1, [hex.trim()]);
    await synced();
    expect((await payment(id)).body).toMatchObject({ spent: true, spent_height: node.tipHeight() });
    // The spend's block leaves the chain; the service does not read the mempool (SCAN_MEMPOOL=false),
    // so nothing says the spend is still around: the output is unspent again.
    node.reorg(1);
    await synced();
    expect((await payment(id)).body).toMatchObject({ spent: false, spent_txid: null, spent_height: null, status: 'confirmed' });
    expect((await getJson(running.url, '/balance')).body).toMatchObject({ confirmed: 0.1, utxo_count: 1 });
  });

  it('resumes after a restart mid-chain without missing or repeating a block', async () => {
    const start = node.tipHeight() + 1;
    running = await startService(env({ SP_START_HEIGHT: String(start) }));
    const invoice0 = await address('restart');
    await running.close();
    running = undefined;
    // 30 blocks, with payments early and late, while the service is down.
    const coins = [node.fund('p2wpkh'), node.fund('p2tr')];
    const early = buildSilentPayment([coins[0]!], [{ address: invoice0, sats: 11_000_000n }], plainScript(4));
    node.mine(1, [early.hex]);
    node.mine(25);
    const late = buildSilentPayment([coins[1]!], [{ address: invoice0, sats: 22_000_000n }], plainScript(5));
    node.mine(1, [late.hex]);
    node.mine(1);
    node.setLatency(15);
    running = await startService(env({ SP_START_HEIGHT: String(start) }));
    await waitFor(() => (scanned() ?? 0) >= start + 5, 15_000, 'some progress');
    await running.close();
    // Stopped between two blocks, with blocks left to scan.
    const stoppedAt = await scannedAfterClose(dir);
    expect(stoppedAt).toBeLessThan(node.tipHeight());
    node.setLatency(0);
    running = await startService(env({ SP_START_HEIGHT: String(start + 10) }));
    await synced();
    const health = await getJson<{ scanner: { start_height: number; scanned_height: number; tip_height: number } }>(running.url, '/health');
    expect(health.body.scanner).toMatchObject({ start_height: start, scanned_height: node.tipHeight(), tip_height: node.tipHeight() });
    expect((await payment(`${early.txid}:0`)).body).toMatchObject({ status: 'confirmed', amount: 0.11 });
    expect((await payment(`${late.txid}:0`)).body).toMatchObject({ status: 'confirmed', amount: 0.22 });
    await waitFor(
      () => relay.events.some((e) => e.type === 'BlockScanned' && e.data.block_height === node.tipHeight()),
      5_000,
      'last event',
    );
    const heights = relay.events.filter((e) => e.type === 'BlockScanned').map((e) => e.data.block_height as number);
    const expectedHeights = Array.from({ length: node.tipHeight() - start + 1 }, (_v, i) => start + i);
    expect([...heights].sort((a, b) => a - b)).toEqual(expectedHeights);
  });

  it('waits for SP_START_HEIGHT above the tip, saying so at warn level with what ends the wait, and authenticates with the node cookie', async () => {
    const cookieNode = await startChainDouble({ port: 0, host: '127.0.0.1', cookieFile: join(dir, 'node', '.cookie'), chain: 'regtest' });
    try {
      const start = cookieNode.tipHeight() + 3;
      const memory = createMemoryLogger('info');
      running = await startService(
        {
          DATA_DIR: join(dir, 'sp'),
          CHAIN_RPC_URL: cookieNode.url,
          CHAIN_RPC_COOKIE_FILE: join(dir, 'node', '.cookie'),
          SP_START_HEIGHT: String(start),
        },
        { logger: memory.logger },
      );
      await waitFor(() => running!.service.scanner.status().state === 'waiting', 10_000, 'waiting');
      expect(scanned()).toBeNull();
      expect(memory.lines.find((l) => l.msg === 'waiting for the chain to reach SP_START_HEIGHT')).toMatchObject({
        level: 40,
        start_height: start,
        ends_when: `the node's tip reaches ${start - 1}`,
      });
      cookieNode.mine(4);
      await waitFor(() => scanned() === cookieNode.tipHeight(), 10_000, 'scan');
      expect(running.service.scanner.status()).toMatchObject({ start_height: start, scanned_height: start + 1 });
      expect(await running.service.store.blockHash(start - 1)).toBeDefined();
      expect(await running.service.store.blockHash(start - 2)).toBeUndefined();
    } finally {
      await running?.close();
      running = undefined;
      await cookieNode.close();
    }
  });

  it('retries a node that goes away and catches up when it comes back', async () => {
    running = await startService(env({ CHAIN_RPC_TIMEOUT_MS: '300' }));
    const invoice = await address('outage');
    await synced();
    const coin = node.fund('p2sh-p2wpkh');
    const paid = buildSilentPayment([coin], [{ address: invoice, sats: 15_000_000n }], plainScript(6));
    for (const behaviour of ['down', 'garbage', 'busy', 'hang'] as const) {
      node.setBehaviour(behaviour);
      const before = running.service.scanner.status().failures;
      await waitFor(() => running!.service.scanner.status().failures > before + 1, 10_000, `failures while ${behaviour}`);
      const health = await getJson<{ status: string; scanner: { state: string; last_error: string } }>(running.url, '/health');
      expect(health.body).toMatchObject({ status: 'degraded', scanner: { state: 'retrying' } });
    }
    node.mine(2, [paid.hex]);
    node.setBehaviour('normal');
    await synced();
    expect((await payment(`${paid.txid}:0`)).body).toMatchObject({ status: 'confirmed', confirmations: 2, address: invoice });
    const health = await getJson<{ status: string; scanner: { failures: number; last_error: string | null } }>(running.url, '/health');
    expect(health.body).toMatchObject({ status: 'healthy', scanner: { failures: 0, last_error: null } });
  });

  it('asks for the tip and the mempool in one request while caught up', async () => {
    running = await startService(env({ SCAN_MEMPOOL_INTERVAL_MS: '50', SCAN_POLL_INTERVAL_MS: '60000' }));
    await synced();
    node.clearRequests();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const calls = node.requests.map((r) => JSON.parse(r.body) as { method: string } | { method: string }[]);
    const mempool = calls.filter((c) => (Array.isArray(c) ? c : [c]).some((one) => one.method === 'getrawmempool'));
    expect(mempool.length).toBeGreaterThanOrEqual(3);
    for (const call of mempool)
      expect(Array.isArray(call) ? call.map((one) => one.method) : call.method).toEqual(['getblockcount', 'getrawmempool']);
  });

  it('counts failures from the last block stored, so a node failing now and then is retried at the shortest wait', async () => {
    // Between the service and the node: every third getblock answered 503 as a busy Core does.
    let getblocks = 0;
    let faults = 0;
    const flaky = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (/"method":\s*"getblock"/.test(body.toString()) && ++getblocks % 3 === 0) {
          faults++;
          res.writeHead(503, { 'Content-Type': 'text/html' }).end('Work queue depth exceeded');
          return;
        }
        const upstream = httpRequest(node.url, { method: 'POST', headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.end(body);
      });
    });
    const { port } = await listen(flaky, 0, '127.0.0.1');
    try {
      const memory = createMemoryLogger('info');
      running = await startService(env({ CHAIN_RPC_URL: `http://127.0.0.1:${port}`, SCAN_MAX_BACKOFF_MS: '60000' }), {
        logger: memory.logger,
      });
      await synced();
      // A new wallet starts at the tip: the blocks mined from here are its catch-up.
      node.mine(60);
      await synced();
      const retries = memory.lines.filter((l) => l.msg === 'chain node failed: retrying');
      expect(faults).toBeGreaterThanOrEqual(15);
      // Each failure came after a block was stored: the first of its run, retried after the
      // shortest wait (logged at 1, 10, 20…: a count carried over would show 10 here).
      expect(retries.length).toBe(faults);
      expect(new Set(retries.map((l) => l.failures))).toEqual(new Set([1]));
    } finally {
      await running?.close();
      running = undefined;
      await closeGracefully(flaky, 100);
    }
  });
});

async function scannedAfterClose(dataDir: string): Promise<number> {
  // Read the stored progress the way the next start will.
  const store = openStore(join(dataDir, 'silent-payments.sqlite'));
  try {
    return store.progress().scannedHeight ?? -1;
  } finally {
    await store.close();
  }
}
