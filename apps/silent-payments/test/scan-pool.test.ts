import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  labeledSpendPub,
  loadSecp256k1Backend,
  packBlockAnswer,
  scanInputsFromRpc,
  type RpcVin,
} from '@repo/bip352';
import { createSilentLogger } from '@repo/service';
import { ChainRpcError } from '../src/chain-rpc';
import type { RpcTransaction } from '../src/scanner';
import { createScanPool, type ScanPool } from '../src/scan-pool';

const noble = loadSecp256k1Backend('noble');
const key = (): Uint8Array => new Uint8Array(randomBytes(32));
const pub = (d: Uint8Array): Uint8Array => noble.toCompressed(noble.baseMul(d));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const scanPriv = key();
const spendPub = pub(key());
const address = (m?: number) =>
  encodeSilentPaymentAddress(pub(scanPriv), m === undefined ? spendPub : labeledSpendPub(scanPriv, spendPub, m), 'regtest');

/** A transaction with one P2WPKH input paying `recipients`, plus a taproot output to no one, as getblock 3 shows it. */
function tx(recipients: string[]): RpcTransaction {
  const d = key();
  const vin: RpcVin[] = [
    {
      txid: hex(key()),
      vout: 3,
      scriptSig: { asm: '', hex: '' },
      txinwitness: [hex(new Uint8Array(71).fill(1)), hex(pub(d))],
      prevout: {
        generated: false,
        height: 7,
        value: 1,
        scriptPubKey: { asm: '0 …', hex: '0014' + hex(new Uint8Array(20)), type: 'witness_v0_keyhash' },
      },
      sequence: 4294967293,
    },
  ];
  const inputs = scanInputsFromRpc(vin).map((input) => ({ ...input, privateKey: d }));
  const keys = recipients.length === 0 ? [] : [...createSilentPaymentOutputs(inputs, recipients).values()].flat();
  keys.push(noble.toXOnly(noble.baseMul(key())));
  return {
    txid: hex(key()),
    vin,
    vout: keys.map((x, n) => ({
      value: (n + 1) / 1000,
      n,
      scriptPubKey: { hex: '5120' + hex(x), address: 'bcrt1p…', type: 'witness_v1_taproot' },
    })),
  };
}

const coinbase = (): RpcTransaction => ({
  txid: hex(key()),
  vin: [{ coinbase: '51', sequence: 4294967295 }],
  vout: [{ value: 50, n: 0, scriptPubKey: { hex: '5120' + hex(noble.toXOnly(noble.baseMul(key()))) } }],
});

/** The node's answer to `getblock <hash> 3` (call `id`) as the chain client hands it over: bytes of their own. */
function answer(id: string, height: number, txs: RpcTransaction[]): Uint8Array {
  const result = { hash: hex(key()), height, previousblockhash: hex(key()), nTx: txs.length, tx: txs };
  return new Uint8Array(Buffer.from(JSON.stringify({ jsonrpc: '2.0', result, id })));
}

describe('scan pool (worker threads)', () => {
  let pool: ScanPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });
  const open = (workers: number, labels: number[] = [], onJobStart?: (busy: number) => void) =>
    (pool = createScanPool({ workers, scanPriv, spendPub, labels, backend: 'native', logger: createSilentLogger(), onJobStart }));

  it('parses and scans blocks in two workers at once, finding exactly what this thread finds, and a label added later', async () => {
    const labels = [1, 2];
    open(2, labels);
    expect(pool!.size).toBe(2);
    const local = createReceiver({ scanPriv, spendPub, labels, backend: loadSecp256k1Backend('native') });
    const blocks = Array.from({ length: 6 }, (_, b) => [
      coinbase(),
      ...Array.from({ length: 5 }, (_, i) => tx(i === 0 ? [] : [address(), address(b % 2 === 0 ? 1 : 2)].slice(0, i % 3))),
    ]);
    const results = await Promise.all(blocks.map((txs, b) => pool!.scanBlock(`sp-${b}`, answer(`sp-${b}`, 100 + b, txs))));
    results.forEach((result, b) => {
      const txs = blocks[b]!;
      expect(result).toMatchObject({ height: 100 + b, nTx: 6, skipped: [] });
      const expected = txs
        .slice(1)
        .map((t) => {
          const found = local.scanTransaction(
            scanInputsFromRpc(t.vin),
            t.vout.map((o) => ({ index: o.n, script: Buffer.from(o.scriptPubKey.hex, 'hex') })),
          );
          return { txid: t.txid, found, values: found.map((f) => t.vout[f.index]!.value) };
        })
        .filter((hit) => hit.found.length > 0);
      expect(result.hits).toEqual(expected);
      // every input of the block but the coinbase's, as payment id then spending txid
      expect(result.spends).toEqual(txs.slice(1).flatMap((t) => [`${t.vin[0]!.txid}:3`, t.txid]));
    });
    expect(results.flatMap((r) => r.hits).length).toBeGreaterThan(6);

    // label 7 is unknown to the workers until added; every worker knows it after
    const paying7 = [tx([address(7)]), tx([address(7)])];
    expect((await pool!.scanBlock('a', answer('a', 1, paying7))).hits).toEqual([]);
    pool!.addLabel(7);
    const again = await Promise.all(['b', 'c', 'd'].map((id) => pool!.scanBlock(id, answer(id, 1, paying7))));
    for (const result of again) expect(result.hits.map((h) => h.found.map((f) => f.label))).toEqual([[7], [7]]);
  });

  it('runs one worker fewer while the node has more blocks to serve, and every worker on the last block', async () => {
    const busy: number[] = [];
    open(2, [], (n) => busy.push(n));
    // 70 transactions with a taproot output: each block's scan is shared in two
    const blocks = Array.from({ length: 3 }, (_, b) => [
      coinbase(),
      ...Array.from({ length: 70 }, (_, i) => tx(i % 10 === b ? [address()] : [])),
    ]);
    const more = await Promise.all(blocks.map((txs, b) => pool!.scanBlock(`m-${b}`, answer(`m-${b}`, 10 + b, txs), true)));
    // three parses and six shares, one at a time
    expect(busy).toEqual(Array<number>(9).fill(1));
    busy.length = 0;
    const last = await Promise.all(blocks.map((txs, b) => pool!.scanBlock(`l-${b}`, answer(`l-${b}`, 10 + b, txs))));
    expect(Math.max(...busy)).toBe(2);
    // the same findings either way
    expect(last.map((r) => r.hits.map((h) => h.txid))).toEqual(more.map((r) => r.hits.map((h) => h.txid)));
    expect(more.map((r) => r.hits.length)).toEqual([7, 7, 7]);
    // a last block given while others wait lets them use every worker too
    busy.length = 0;
    await Promise.all([
      pool!.scanBlock('x-0', answer('x-0', 20, blocks[0]!), true),
      pool!.scanBlock('x-1', answer('x-1', 21, blocks[1]!), true),
      pool!.scanBlock('x-2', answer('x-2', 22, blocks[2]!)),
    ]);
    expect(busy.slice(0, 2)).toEqual([1, 2]);
  });

  it('reads a block natively (the default) as JSON.parse does, and leaves to JSON.parse a block it does not handle', async () => {
    open(1, [1]);
    const parsed = createScanPool({
      workers: 1,
      scanPriv,
      spendPub,
      labels: [1],
      backend: 'native',
      nativeParse: false,
      logger: createSilentLogger(),
    });
    try {
      const txs = [coinbase(), tx([]), tx([address()]), tx([address(1), address()]), tx([address()])];
      const good = answer('n', 7, txs);
      expect(packBlockAnswer(good, 'n')).toBeDefined();
      const bad = tx([address()]);
      bad.vin[0]!.prevout!.scriptPubKey.hex = 'not hex';
      const withBad = answer('n', 8, [...txs, bad]);
      expect(packBlockAnswer(withBad, 'n')).toBeUndefined();
      for (const bytes of [good, withBad]) {
        const natively = await pool!.scanBlock('n', bytes.slice());
        expect(natively).toEqual(await parsed.scanBlock('n', bytes.slice()));
        expect(natively.hits.map((h) => h.found.length)).toEqual([1, 2, 1]);
      }
      expect((await pool!.scanBlock('n', withBad.slice())).skipped).toEqual([
        { txid: bad.txid, error: expect.stringContaining('prevout') as string },
      ]);
    } finally {
      await parsed.close();
    }
  });

  it('moves the bytes to the worker without a copy when they own their memory, and copies a slice of a shared buffer', async () => {
    open(1);
    const own = answer('x', 5, [tx([address()])]);
    const scanning = pool!.scanBlock('x', own);
    expect(own.byteLength).toBe(0); // transferred: detached here
    expect((await scanning).hits).toHaveLength(1);

    const bytes = answer('y', 6, [tx([address()])]);
    const shared = Buffer.alloc(bytes.length + 10);
    shared.set(bytes, 10);
    const slice = shared.subarray(10);
    expect((await pool!.scanBlock('y', slice)).hits).toHaveLength(1);
    expect(slice.byteLength).toBe(bytes.length); // still usable here
  });

  it('reports a transaction the library refuses instead of failing the block', async () => {
    open(1);
    const bad = tx([address()]);
    bad.vin[0]!.prevout!.scriptPubKey.hex = 'not hex';
    const good = tx([address()]);
    const result = await pool!.scanBlock('sp-1', answer('sp-1', 9, [bad, good]));
    expect(result.skipped).toEqual([{ txid: bad.txid, error: expect.stringContaining('prevout') as string }]);
    expect(result.hits.map((h) => h.txid)).toEqual([good.txid]);
  });

  it("words a transaction it cannot read as scanInputsFromRpc does on the scanner's own thread (SCAN_WORKERS=0), and still scans the rest", async () => {
    open(1);
    const input = (t: RpcTransaction) => t.vin[0]!;
    const broken: Array<(t: RpcTransaction) => void> = [
      (t) => (input(t).prevout!.scriptPubKey.hex = 'not hex'),
      (t) => delete (input(t).prevout!.scriptPubKey as { hex?: string }).hex,
      (t) => (input(t).txinwitness![0] = 'abc'),
      (t) => (input(t).txinwitness = 'zz' as unknown as string[]),
      (t) => (input(t).txid = 'ab'.repeat(31)),
      (t) => (input(t).txid = 'zz'.repeat(32)),
      (t) => (input(t).scriptSig = { asm: '', hex: 'g0' }),
      (t) => delete input(t).vout,
    ];
    const bad = broken.map((mutate) => {
      const t = tx([address()]);
      mutate(t);
      return t;
    });
    const good = tx([address()]);
    const result = await pool!.scanBlock('sp-w', answer('sp-w', 9, [...bad, good]));
    const expected = bad.map((t) => {
      try {
        scanInputsFromRpc(t.vin);
      } catch (err) {
        return { txid: t.txid, error: (err as Error).message };
      }
      throw new Error(`scanInputsFromRpc read the broken transaction ${t.txid}`);
    });
    expect(result.skipped).toEqual(expected);
    expect(new Set(expected.map((e) => e.error)).size).toBe(broken.length);
    expect(result.hits.map((h) => h.txid)).toEqual([good.txid]);

    const output = tx([address()]);
    output.vout[0]!.scriptPubKey.hex = '5120' + 'zz'.repeat(32);
    expect((await pool!.scanBlock('sp-o', answer('sp-o', 10, [output]))).skipped).toEqual([
      { txid: output.txid, error: '"vout[0].scriptPubKey.hex" expected an even-length hex string' },
    ]);
  });

  it('rejects with a ChainRpcError for a JSON-RPC error, an answer to another call, garbage, or a block without prevouts', async () => {
    open(1);
    const bytes = (value: unknown) => new Uint8Array(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));
    await expect(
      pool!.scanBlock('e', bytes({ jsonrpc: '2.0', error: { code: -5, message: 'Block not found' }, id: 'e' })),
    ).rejects.toMatchObject({ name: 'ChainRpcError', kind: 'rpc', rpcCode: -5, message: 'getblock: Block not found' });
    await expect(pool!.scanBlock('e', answer('other', 1, []))).rejects.toMatchObject({ kind: 'garbage' });
    await expect(pool!.scanBlock('e', bytes('<html>'))).rejects.toMatchObject({ kind: 'garbage' });
    await expect(pool!.scanBlock('e', bytes({ jsonrpc: '2.0', result: { tx: 'no' }, id: 'e' }))).rejects.toMatchObject({
      kind: 'garbage',
      message: 'getblock: the answer is not a block',
    });
    const old = tx([address()]);
    delete old.vin[0]!.prevout;
    const failure = pool!.scanBlock('e', answer('e', 1, [old]));
    await expect(failure).rejects.toBeInstanceOf(ChainRpcError);
    await expect(failure).rejects.toMatchObject({ kind: 'garbage', message: expect.stringContaining('verbosity 3') as string });
    // the worker survives all of these
    expect((await pool!.scanBlock('f', answer('f', 2, [tx([address()])]))).hits).toHaveLength(1);
  });

  it('closes at any moment after the start, even while its workers still load their modules', async () => {
    // In a child process: a worker terminated while it loads an ES module aborts the whole process.
    const child = spawn(process.execPath, ['-r', '@repo/ts-register', join(__dirname, 'support', 'stop-while-loading.ts')], {
      cwd: join(__dirname, '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    expect({ code, signal, output: output.split('\n')[0] }).toEqual({ code: 0, signal: null, output: 'closed 61' });
  }, 60_000);
});
