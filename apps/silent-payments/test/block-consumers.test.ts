import { buildSilentPayment, plainScript } from '@repo/chain-double';
import type { BlockConsumer } from '../src/scanner';
import type { BlockTransaction, NewPayment } from '../src/store';
import { waitFor } from './support/fake-relay';
import { randomAddressBook, useScannerParts, type StoreBackend } from './support/scanner-parts';

/** A payment no block holds, written by a consumer through the block's transaction. */
function stray(height: number): NewPayment {
  return {
    txid: height.toString(16).padStart(64, 'e'),
    vout: 7,
    address: 'tsp1stray',
    labelM: null,
    amountSats: 1n,
    outputKey: 'aa'.repeat(32),
    tweak: 'bb'.repeat(32),
  };
}

/**
 * A consumer attached beside the service's payments (src/scanner/apply.ts), as the light-wallet
 * index could be: inside the block's transaction it reads, through `tx`, the block's hash the
 * payments consumer wrote just before it (not committed yet: the transaction is shared), and
 * keeps each block's height and hash once the transaction committed. At `failAt` it writes a
 * stray pending payment through `tx` and throws: that write must go with the block.
 */
function recordingConsumer(
  options: { failAt?: number } = {},
): BlockConsumer & { committed: number[]; failed: number; rows: Map<number, string>; unseen: number[] } {
  const consumer = {
    name: 'recording',
    committed: [] as number[],
    failed: 0,
    rows: new Map<number, string>(),
    // heights whose hash the payments consumer's write was not visible through tx
    unseen: [] as number[],
    async apply(block: Parameters<BlockConsumer['apply']>[0], height: number, tx: BlockTransaction) {
      if ((await tx.blockHash(height)) !== block.packed.hash || tx.progress().scannedHeight !== height) consumer.unseen.push(height);
      if (height === options.failAt && consumer.failed === 0) {
        consumer.failed++;
        await tx.addPending([stray(height)]);
        throw new Error('the index could not store the block');
      }
      return () => {
        consumer.rows.set(height, block.packed.hash);
        consumer.committed.push(height);
      };
    },
    rollback(height: number) {
      return () => {
        for (const h of [...consumer.rows.keys()]) if (h > height) consumer.rows.delete(h);
      };
    },
  };
  return consumer;
}

describe.each<StoreBackend>(['sqlite', 'postgres'])('block consumers beside the payments (%s)', (backend) => {
  const t = useScannerParts(`sp-consumers-${backend}-`, backend);
  let consumer: ReturnType<typeof recordingConsumer>;
  const seen = () => [...consumer.rows].sort(([a], [b]) => a - b).map(([height, hash]) => ({ height, hash }));
  const heights = () => seen().map((row) => row.height);

  it('applies every block to each consumer in the store transaction of its payments, and rolls them back together on a reorg', async () => {
    const { node, store } = t;
    const { book } = randomAddressBook();
    const paid = buildSilentPayment([node.fund('p2wpkh')], [{ address: book.baseAddress, sats: 2_000_000n }], plainScript(1));
    const first = node.tipHeight() + 1;
    node.mine(3, [paid.hex]);
    consumer = recordingConsumer();
    const scanner = t.start({ book, startHeight: first, mempool: false, consumers: [consumer] });
    await waitFor(
      () => scanner.status().state === 'synced' && scanner.status().scanned_height === node.tipHeight(),
      20_000,
      'the catch-up',
    );
    expect(heights()).toEqual([first, first + 1, first + 2]);
    expect(consumer.committed).toEqual(heights());
    // inside the shared transaction, it saw the block hash and progress the payments consumer had just written
    expect(consumer.unseen).toEqual([]);
    for (const row of seen()) expect(row.hash).toBe(await store.blockHash(row.height));
    expect(await store.getPayment(`${paid.txid}:0`)).toMatchObject({ blockHeight: first });

    // the three blocks leave the chain (the payment back to the mempool), four others take their place
    const orphaned = seen().map((row) => row.hash);
    node.reorg(3);
    scanner.wake();
    await waitFor(() => scanner.status().scanned_height === node.tipHeight(), 20_000, 'the new chain');
    expect(heights()).toEqual([first, first + 1, first + 2, first + 3]);
    for (const row of seen()) {
      expect(row.hash).toBe(await store.blockHash(row.height));
      expect(orphaned).not.toContain(row.hash);
    }
    expect(await store.getPayment(`${paid.txid}:0`)).toBeUndefined();
    node.mine(1);
    scanner.wake();
    await waitFor(() => scanner.status().scanned_height === first + 4, 20_000, 'the block of the payment');
    expect(await store.getPayment(`${paid.txid}:0`)).toMatchObject({ blockHeight: first + 4 });
    expect(heights()).toEqual([first, first + 1, first + 2, first + 3, first + 4]);
  });

  it('stores nothing of a block a consumer fails on, for any consumer, and retries it', async () => {
    const { node, store } = t;
    const { book } = randomAddressBook();
    const paid = buildSilentPayment([node.fund('p2wpkh')], [{ address: book.baseAddress, sats: 3_000_000n }], plainScript(2));
    const first = node.tipHeight() + 1;
    node.mine(1);
    node.mine(1, [paid.hex]);
    node.mine(1);
    consumer = recordingConsumer({ failAt: first + 1 });
    // the retry waits for wake(): what the failure left can be read first
    const scanner = t.start({
      book,
      startHeight: first,
      mempool: false,
      minBackoffMs: 600_000,
      maxBackoffMs: 600_000,
      consumers: [consumer],
    });
    await waitFor(() => scanner.status().state === 'retrying', 20_000, 'the failure');
    expect(consumer.failed).toBe(1);
    expect(scanner.status().last_error).toBe('the index could not store the block');
    // the failed block is stored for no one: not its payment, not the progress, not what the consumer wrote
    expect(store.progress().scannedHeight).toBe(first);
    expect(await store.blockHash(first + 1)).toBeUndefined();
    expect(await store.pendingTxids()).toEqual([]);
    expect(await store.getPayment(`${stray(first + 1).txid}:7`)).toBeUndefined();
    expect(await store.getPayment(`${paid.txid}:0`)).toBeUndefined();
    expect(heights()).toEqual([first]);
    scanner.wake();
    await waitFor(() => scanner.status().scanned_height === first + 2, 20_000, 'the retry');
    expect(heights()).toEqual([first, first + 1, first + 2]);
    expect(consumer.committed).toEqual([first, first + 1, first + 2]);
    expect(await store.getPayment(`${paid.txid}:0`)).toMatchObject({ blockHeight: first + 1 });
  });

  it('awaits the prepare and unwind of a consumer with a store of its own before the transaction, never leaving it behind the payments', async () => {
    const { node, store } = t;
    const { book } = randomAddressBook();
    const first = node.tipHeight() + 1;
    node.mine(3);
    // a store of its own, asynchronous (as PostgreSQL is): height -> hash
    const own = new Map<number, string>();
    const calls: string[] = [];
    let failOnce = first + 1;
    const outside: BlockConsumer = {
      name: 'outside',
      async prepare(block, height) {
        await new Promise((resolve) => setImmediate(resolve));
        calls.push(`prepare ${height}`);
        // what it holds at this height and hash already: done (the block comes again after a failure)
        if (own.get(height) === block.packed.hash) return;
        own.set(height, block.packed.hash);
        if (height === failOnce) {
          failOnce = -1;
          throw new Error('the other store failed after writing');
        }
      },
      async unwind(height) {
        await new Promise((resolve) => setImmediate(resolve));
        calls.push(`unwind ${height}`);
        for (const h of own.keys()) if (h > height) own.delete(h);
      },
      apply: () => undefined,
      rollback: () => undefined,
    };
    const scanner = t.start({
      book,
      startHeight: first,
      mempool: false,
      minBackoffMs: 600_000,
      maxBackoffMs: 600_000,
      consumers: [outside],
    });
    await waitFor(() => scanner.status().state === 'retrying', 20_000, 'the failure');
    // ahead of the payments (it wrote the failed block), never behind
    expect(store.progress().scannedHeight).toBe(first);
    expect([...own.keys()]).toEqual([first, first + 1]);
    scanner.wake();
    await waitFor(() => scanner.status().scanned_height === first + 2, 20_000, 'the retry');
    expect(calls).toEqual([`prepare ${first}`, `prepare ${first + 1}`, `prepare ${first + 1}`, `prepare ${first + 2}`]);
    for (const [h, hash] of own) expect(await store.blockHash(h)).toBe(hash);

    node.reorg(2);
    scanner.wake();
    await waitFor(() => scanner.status().scanned_height === node.tipHeight(), 20_000, 'the new chain');
    expect(calls).toContain(`unwind ${first}`);
    expect([...own.keys()].sort((a, b) => a - b)).toEqual([first, first + 1, first + 2, first + 3]);
    for (const [h, hash] of own) expect(await store.blockHash(h)).toBe(hash);
  });
});
