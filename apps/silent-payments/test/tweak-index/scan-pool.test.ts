import { loadSecp256k1Backend } from '@repo/bip352';
import { createMemoryLogger } from '@repo/service';
import { createRemoteScanPool, type RemoteScanPool } from '../../src/tweak-index/remote-scan/scan-pool';
import { readWalletKeys, type WalletKeys } from '../../src/tweak-index/remote-scan/wallet-keys';
import type { StoredTx } from '../../src/tweak-index/store';
import { newWallet, otherTx, payingTx, txidOf, type TestWallet } from './support/sp-wallets';

// The remote scan's worker threads (src/tweak-index/remote-scan/scan-pool.ts): what they find, the
// order they take jobs in, and how they fail.
const backend = loadSecp256k1Backend();
const keysOf = (w: TestWallet, labels: number[] = []): WalletKeys => readWalletKeys([...w.params], labels, 'regtest', backend);
const stored = (height: number, tx: ReturnType<typeof payingTx>): StoredTx => ({
  height,
  ...tx,
  outputs: tx.outputs.map((o) => ({ ...o, spentHeight: null })),
});

describe('the remote scan pool', () => {
  const pools: RemoteScanPool[] = [];
  const pool = (workers: number, backendName?: string): RemoteScanPool => {
    const p = createRemoteScanPool({ workers, backend: backendName });
    pools.push(p);
    return p;
  };
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });

  it('finds the rows paying the wallet, its change and asked labels too, with their outputs by vout', async () => {
    const alice = newWallet();
    const rows = [
      stored(1, otherTx(txidOf(1, 0))),
      stored(1, payingTx(alice, txidOf(1, 1), { count: 2 })),
      stored(2, payingTx(alice, txidOf(2, 1), { label: 0 })),
      stored(2, payingTx(alice, txidOf(2, 2), { label: 3 })),
      stored(2, payingTx(newWallet(), txidOf(2, 3))),
    ];
    const p = pool(2);
    const found = await p.scan({}, keysOf(alice, [3]), rows, false);
    expect(found.map((m) => [m.height, m.txid, m.outputs.map((o) => [o.vout, o.value])])).toEqual([
      [
        1,
        txidOf(1, 1),
        [
          [0, 1000n],
          [1, 1001n],
        ],
      ],
      [2, txidOf(2, 1), [[0, 1000n]]],
      [2, txidOf(2, 2), [[0, 1000n]]],
    ]);
    expect(found[0]!.outputs[0]!.xonly).toBe(Buffer.from(rows[1]!.outputs[0]!.xonly).toString('hex'));
    // Without label 3 that payment is not found; the change label always is.
    expect((await p.scan({}, keysOf(alice), rows, false)).map((m) => m.txid)).toEqual([txidOf(1, 1), txidOf(2, 1)]);
  });

  it('takes an urgent job before any waiting history, and the owners’ history jobs in turn', async () => {
    const alice = newWallet();
    const rows = [stored(1, payingTx(alice, txidOf(1, 1)))];
    const p = pool(1);
    const done: string[] = [];
    const job = (owner: object, name: string, urgent: boolean): Promise<void> =>
      p.scan(owner, keysOf(alice), rows, urgent).then(() => void done.push(name));
    const [a, b, c] = [{}, {}, {}];
    // a1 starts at once (the only worker); the others wait, queued in this order.
    await Promise.all([job(a, 'a1', false), job(a, 'a2', false), job(a, 'a3', false), job(b, 'b1', false), job(c, 'c-new-block', true)]);
    expect(done).toEqual(['a1', 'c-new-block', 'a2', 'b1', 'a3']);
  });

  it('drops a forgotten owner’s waiting jobs (they find nothing) and rejects after close', async () => {
    const alice = newWallet();
    const rows = [stored(1, payingTx(alice, txidOf(1, 1)))];
    const p = pool(1);
    const owner = {};
    const first = p.scan(owner, keysOf(alice), rows, false);
    const waiting = p.scan(owner, keysOf(alice), rows, false);
    p.forget(owner);
    expect(await waiting).toEqual([]);
    expect(await first).toHaveLength(1);
    await p.close();
    await expect(p.scan(owner, keysOf(alice), rows, false)).rejects.toThrow('the remote scan pool is closed');
  });

  it('rejects the job of a worker that cannot start, naming why, and logs it without the keys', async () => {
    const alice = newWallet();
    const memory = createMemoryLogger();
    const p = createRemoteScanPool({ workers: 1, backend: 'no-such-backend', logger: memory.logger });
    pools.push(p);
    await expect(p.scan({}, keysOf(alice), [stored(1, payingTx(alice, txidOf(1, 1)))], false)).rejects.toThrow(
      /remote scan failed: .*backend/i,
    );
    expect(memory.lines.map((l) => l.msg)).toContain('remote scan job failed: the subscription waits for the next block');
    expect(JSON.stringify(memory.lines)).not.toContain(alice.params[0]);
  });
});
