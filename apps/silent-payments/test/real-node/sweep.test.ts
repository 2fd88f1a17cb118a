import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { makeSilentPayment } from '@repo/regtest';
import { hexToBytes } from '@repo/crypto';
import { createSweepPsbt, signSweepPsbt } from '../../src/psbt';
import { waitFor } from '../support/fake-relay';
import { startRealNodeStack, until, type RealNodeStack } from '../support/real-node';
import { getJson, postJson, startService, type RunningService } from '../support/service';

const run = promisify(execFile);
const CLI = resolve(__dirname, '../../dist/cli.js');
const PROXY_USER = 'merchant';
const PROXY_PASSWORD = 'merchant-secret';

interface PaymentDetail {
  id: string;
  status: string;
  block_height: number | null;
  spent: boolean;
  spent_txid: string | null;
  spent_height: number | null;
  output_key: string;
  tweak: string;
  label: string | null;
}

/**
 * The merchant's whole path against Bitcoin Core 29 through the rpc-proxy (docs/silent-payments.md,
 * "Invoices", "Sweeping"): receive on a label, the invoice paid, a reorg of the paying block, a sweep
 * signed offline by `dist/cli.js sign`, broadcast with sendrawtransaction through the proxy, mined,
 * the outputs spent, the balance zero, and reorgs of the spending block. New blocks are followed by
 * the long poll alone: the fallback poll is set to a minute.
 */
describe('receive on a label, sweep with the offline key, against a real bitcoind', () => {
  let stack: RealNodeStack;
  let running: RunningService | undefined;

  beforeAll(async () => {
    // -persistmempool=0: a restart empties the mempool (used to drop a reorged spend).
    stack = await startRealNodeStack({
      name: 'sp-sweep',
      proxyUser: PROXY_USER,
      proxyPassword: PROXY_PASSWORD,
      nodeArgs: ['-persistmempool=0'],
    });
  });
  afterAll(async () => {
    await running?.close();
    await stack?.close();
  });

  /** A JSON-RPC call through the proxy, as a wallet would broadcast. */
  async function viaProxy<T>(method: string, params: unknown[]): Promise<T> {
    const res = await fetch(stack.proxyUrl, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')}` },
      body: JSON.stringify({ jsonrpc: '1.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result: T; error: { message: string } | null };
    if (body.error !== null) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  }
  const payment = async (id: string) => (await getJson<PaymentDetail>(running!.url, `/payments/${id}`)).body;
  it('takes an invoice from unpaid to paid, sweeps it with the offline signer, and follows reorgs of both', async () => {
    const { node, wallet, relay, dir } = stack;
    running = await startService(
      stack.env({ SCAN_POLL_INTERVAL_MS: '60000', SCAN_MEMPOOL_INTERVAL_MS: '100', SCAN_LONG_POLL_TIMEOUT_MS: '10000' }),
    );
    await until(async () => running!.service.scanner.status().state === 'synced', 'the first scan');
    await until(async () => running!.service.scanner.longPollState() === 'waiting', 'the long poll');
    expect((await getJson<{ scanner: { long_poll: string } }>(running.url, '/health')).body.scanner.long_poll).toBe('waiting');
    const invoice = (await postJson<{ address: string }>(running.url, '/generate-address', { label: 'order-1', amount: 0.005 })).body;

    // 1. Paid in the mempool: pending; mined: paid, InvoicePaid.
    const paid = await makeSilentPayment(node, wallet, { address: invoice.address, sats: 500_000n });
    const id = `${paid.txid}:${paid.vout}`;
    await until(async () => (await getJson(running!.url, `/payments/${id}`)).status === 200, 'the pending payment');
    expect((await getJson(running.url, '/labels/order-1')).body).toMatchObject({ status: 'pending', pending: 0.005, received: 0 });
    const [payBlock] = (await wallet.mine(1)) as [string];
    const payHeight = await node.rpc<number>('getblockcount');
    await until(async () => (await payment(id)).status === 'confirmed', 'the confirmation (long poll)', 2_000);
    expect((await getJson(running.url, '/labels/order-1')).body).toEqual({
      label: 'order-1',
      address: invoice.address,
      amount: 0.005,
      received: 0.005,
      pending: 0,
      status: 'paid',
      created_at: expect.any(String),
      payments: [id],
    });
    await waitFor(() => relay.events.some((e) => e.type === 'InvoicePaid'), 5_000, 'InvoicePaid');
    expect(relay.events.find((e) => e.type === 'InvoicePaid')?.data).toEqual({
      label: 'order-1',
      address: invoice.address,
      amount: 0.005,
      received: 0.005,
      status: 'paid',
    });
    expect(await payment(id)).toMatchObject({ output_key: paid.outputKey, label: 'order-1', spent: false });

    // 2. The paying block reorged out: PaymentReorged, the payment back in the mempool (pending).
    await node.rpc('invalidateblock', [payBlock]);
    expect(await node.rpc<string[]>('getrawmempool')).toContain(paid.txid);
    await until(async () => (await payment(id)).status === 'pending', 'the payment pending again');
    await waitFor(() => relay.events.some((e) => e.type === 'PaymentReorged'), 5_000, 'PaymentReorged');
    expect(relay.events.filter((e) => e.type === 'PaymentReorged').map((e) => e.data)).toEqual([
      { txid: paid.txid, vout: paid.vout, address: invoice.address, amount: 0.005, old_block_height: payHeight, old_block_hash: payBlock },
    ]);
    expect((await getJson(running.url, '/labels/order-1')).body).toMatchObject({ status: 'pending', received: 0 });
    await wallet.mine(1);
    await until(async () => (await payment(id)).status === 'confirmed', 'confirmed on the new branch', 2_000);

    // 3. Sweep: the PSBT from the service, read by Core, signed offline by the CLI.
    const to = await wallet.newAddress('bech32');
    const sweep = (
      await postJson<{ psbt: string; fee: number; vsize: number; amount: number; ids: string[] }>(running.url, '/psbt', { to, fee_rate: 2 })
    ).body;
    expect(sweep.ids).toEqual([id]);
    const decoded = await node.rpc<{ inputs: { witness_utxo: { amount: number }; unknown: Record<string, string> }[]; fee: number }>(
      'decodepsbt',
      [sweep.psbt],
    );
    expect(decoded.fee).toBeCloseTo(sweep.fee, 8);
    const detail = await payment(id);
    expect(decoded.inputs[0]!.unknown).toMatchObject({ '20': detail.tweak });
    const psbtFile = join(dir, 'sweep.psbt');
    writeFileSync(psbtFile, sweep.psbt);
    const signed = await run(process.execPath, [CLI, 'sign', '--psbt', psbtFile, '--spend-secret', join(dir, 'spend.secret')]);
    const hex = signed.stdout.trim();
    expect(signed.stderr).toBe('');
    expect(hex).toMatch(/^[0-9a-f]+$/);

    // A PSBT that is not ours is refused by the CLI: one line, exit 1.
    const stranger = mkdtempSync(join(tmpdir(), 'sp-stranger-'));
    writeFileSync(join(stranger, 'spend.secret'), `${'11'.repeat(32)}\n`);
    await expect(
      run(process.execPath, [CLI, 'sign', '--psbt', psbtFile, '--spend-secret', join(stranger, 'spend.secret')]),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: input 0 is for another spend key/),
    });
    rmSync(stranger, { recursive: true, force: true });

    // 4. Broadcast through the proxy: accepted, the fee rate as asked for the real size.
    const sweepTxid = await viaProxy<string>('sendrawtransaction', [hex]);
    const entry = await node.rpc<{ vsize: number; fees: { base: number } }>('getmempoolentry', [sweepTxid]);
    expect(entry.vsize).toBe(sweep.vsize);
    expect(entry.fees.base).toBeCloseTo(sweep.fee, 8);
    await until(async () => (await payment(id)).spent_txid === sweepTxid, 'the spend seen in the mempool', 2_000);
    expect(await payment(id)).toMatchObject({ spent: true, spent_height: null });

    // 5. Mined: spent with the txid and height within 2 s of the block; the balance is zero.
    const [spendBlock] = (await wallet.mine(1)) as [string];
    const spendHeight = await node.rpc<number>('getblockcount');
    await until(async () => (await payment(id)).spent_height === spendHeight, 'spent in the block', 2_000);
    expect(await payment(id)).toMatchObject({ spent: true, spent_txid: sweepTxid, spent_height: spendHeight });
    expect((await getJson(running.url, '/balance')).body).toEqual({ confirmed: 0, pending: 0, spent_pending: 0, utxo_count: 0 });
    await waitFor(
      () => relay.events.some((e) => e.type === 'PaymentSpent' && e.data.block_height === spendHeight),
      5_000,
      'PaymentSpent of the block',
    );
    expect(relay.events.filter((e) => e.type === 'PaymentSpent').map((e) => e.data)).toEqual([
      { txid: paid.txid, vout: paid.vout, spent_txid: sweepTxid, block_height: null },
      { txid: paid.txid, vout: paid.vout, spent_txid: sweepTxid, block_height: spendHeight },
    ]);
    // The invoice stays paid: spending what was received does not unpay it.
    expect((await getJson(running.url, '/labels/order-1')).body).toMatchObject({ status: 'paid' });

    // 6. The spending block reorged out: the spend is back in the mempool, so the output is pending-spent.
    await node.rpc('invalidateblock', [spendBlock]);
    expect(await node.rpc<string[]>('getrawmempool')).toContain(sweepTxid);
    // (The rollback first makes it unspent; the next mempool pass finds the spend again.)
    await until(async () => {
      const p = await payment(id);
      return p.spent_height === null && p.spent_txid === sweepTxid;
    }, 'the spend back in the mempool');
    expect(await payment(id)).toMatchObject({ status: 'confirmed', spent: true, spent_txid: sweepTxid, spent_height: null });
    expect((await getJson(running.url, '/balance')).body).toMatchObject({ confirmed: 0, spent_pending: 0.005, utxo_count: 0 });

    // 7. The node restarts without the spend (-persistmempool=0): the output is unspent again.
    const mineTo = await wallet.newAddress('bech32');
    await node.restart();
    expect(await node.rpc<string[]>('getrawmempool')).not.toContain(sweepTxid);
    await until(async () => !(await payment(id)).spent, 'unspent again', 30_000);
    expect(await payment(id)).toMatchObject({ status: 'confirmed', spent: false, spent_txid: null, spent_height: null });
    expect((await getJson(running.url, '/balance')).body).toEqual({ confirmed: 0.005, pending: 0, spent_pending: 0, utxo_count: 1 });

    // And swept again, this time from the library directly: the same spend confirms.
    const again = createSweepPsbt(
      [{ txid: paid.txid, vout: paid.vout, amountSats: 500_000n, outputKey: detail.output_key, tweak: detail.tweak }],
      running.service.keys.spendPub,
      hexToBytes(`0014${'22'.repeat(20)}`),
      3,
    );
    const tx2 = signSweepPsbt(again.psbt, hexToBytes(readFileSync(join(dir, 'spend.secret'), 'utf8').trim()));
    await viaProxy('sendrawtransaction', [tx2.hex]);
    await node.rpc('generatetoaddress', [1, mineTo]);
    await until(
      async () => (await payment(id)).spent_txid === tx2.txid && (await payment(id)).spent_height !== null,
      'spent by the second sweep',
      5_000,
    );
    expect((await getJson(running.url, '/balance')).body).toEqual({ confirmed: 0, pending: 0, spent_pending: 0, utxo_count: 0 });
  });
});
