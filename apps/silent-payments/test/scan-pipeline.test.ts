import { buildSilentPayment, plainScript } from '@repo/chain-double';
import { createSilentLogger } from '@repo/service';
import type { AddressBook } from '../src/address-book';
import type { ChainRpcClient } from '../src/chain-rpc';
import { createNoopPublisher, type Publisher } from '../src/publisher';
import { createScanPool, type ScanPool } from '../src/scan-pool';
import { waitFor } from './support/fake-relay';
import { randomAddressBook, useScannerParts } from './support/scanner-parts';

const BLOCKS = 9;

/**
 * The catch-up pipeline (docs/silent-payments.md, "Catching up") with a real pool whose results
 * are made to come back out of block order, against the chain double.
 */
describe('scanner catch-up pipeline', () => {
  const t = useScannerParts('sp-pipeline-');
  let book: AddressBook;
  let pool: ScanPool;
  let first: number;
  // txid of the payment mined in each block, by height
  const paid = new Map<number, string>();

  beforeAll(() => {
    const { node } = t;
    const keys = randomAddressBook();
    book = keys.book;
    const coins = Array.from({ length: BLOCKS }, () => node.fund('p2wpkh'));
    first = node.tipHeight() + 1;
    coins.forEach((coin, i) => {
      const tx = buildSilentPayment([coin], [{ address: book.baseAddress, sats: BigInt(1_000_000 * (i + 1)) }], plainScript(3));
      node.mine(1, [tx.hex]);
      paid.set(first + i, tx.txid);
    });
    pool = createScanPool({
      workers: 2,
      scanPriv: keys.scanPriv,
      spendPub: keys.spendPub,
      labels: [],
      backend: 'native',
      logger: createSilentLogger(),
    });
  });
  afterAll(async () => {
    await pool.close();
  });

  /**
   * The pool's results held back so that, within each window of `window` blocks sent, the later
   * ones complete first; `order` records the heights in the order their scans completed.
   */
  function reversingPool(window: number, order: number[]): ScanPool {
    let sent = 0;
    return {
      ...pool,
      size: pool.size,
      async scanBlock(rpcId, body) {
        const slot = sent++ % window;
        const block = await pool.scanBlock(rpcId, body);
        await new Promise((resolve) => setTimeout(resolve, (window - slot) * 40));
        order.push(block.height);
        return block;
      },
    };
  }

  /** Records BlockScanned events and checks, as each is published, that its block is stored whole and nothing above it. */
  function checkingPublisher(events: number[], problems: string[]): Publisher {
    const noop = createNoopPublisher();
    const { store } = t;
    return {
      ...noop,
      publish(type, data) {
        if (type === 'BlockScanned') {
          const height = (data as { block_height: number }).block_height;
          events.push(height);
          if (store.progress().scannedHeight !== height) problems.push(`${height}: scanned_height ${store.progress().scannedHeight}`);
          for (const [h, txid] of paid) {
            const stored = store.getPayment(`${txid}:0`) !== undefined;
            if (stored !== h <= height) problems.push(`at ${height}: the payment of ${h} ${stored ? 'stored' : 'missing'}`);
          }
        }
        return noop.publish(type, data);
      },
    };
  }

  it.each([1, 2])(
    'applies blocks in order and each one whole, though their scans complete out of order, with at most SCAN_PREFETCH_BLOCKS fetched ahead, SCAN_FETCH_CONCURRENCY=%i requests at a time',
    async (atOnce) => {
      const order: number[] = [];
      const events: number[] = [];
      const problems: string[] = [];
      const prefetch = 3;
      const { rpc, store } = t;
      const publisher = checkingPublisher(events, problems);
      // counts the blocks asked of the node that are not applied yet
      let inFlight = 0;
      let most = 0;
      // and the requests the node is serving at once
      let requesting = 0;
      let mostAtOnce = 0;
      const counted: ChainRpcClient = {
        ...rpc,
        call: (method, params) => rpc.call(method, params),
        async callRaw(method, params) {
          most = Math.max(most, ++inFlight);
          mostAtOnce = Math.max(mostAtOnce, ++requesting);
          try {
            // the node takes a while to serve a block: requests overlap when they may
            await new Promise((resolve) => setTimeout(resolve, 20));
            return await rpc.callRaw(method, params);
          } finally {
            requesting--;
          }
        },
      };
      const tracked: Publisher = {
        ...publisher,
        publish(type, data) {
          if (type === 'BlockScanned') inFlight--;
          return publisher.publish(type, data);
        },
      };
      const scanner = t.start({
        rpc: counted,
        book,
        publisher: tracked,
        startHeight: first,
        mempool: false,
        pool: reversingPool(prefetch, order),
        prefetchBlocks: prefetch,
        fetchConcurrency: atOnce,
      });
      await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');

      const heights = Array.from({ length: BLOCKS }, (_, i) => first + i);
      expect(order).not.toEqual(heights); // the scans did complete out of order
      expect([...order].sort((a, b) => a - b)).toEqual(heights);
      expect(events).toEqual(heights);
      expect(problems).toEqual([]);
      expect(most).toBe(prefetch); // fetched ahead, never further than the bound
      expect(mostAtOnce).toBe(atOnce); // blocks asked of the node at once, never more
      for (const [h, txid] of paid)
        expect(store.getPayment(`${txid}:0`)).toMatchObject({ blockHeight: h, amountSats: BigInt(h - first + 1) * 1_000_000n });
    },
  );

  it('stores nothing of a block whose scan failed, and retries it', async () => {
    const events: number[] = [];
    const problems: string[] = [];
    let failed = false;
    const failing: ScanPool = {
      ...pool,
      size: pool.size,
      async scanBlock(rpcId, body) {
        const block = await pool.scanBlock(rpcId, body);
        if (block.height === first + 4 && !failed) {
          failed = true;
          throw new Error('scan worker exited (code 1)');
        }
        return block;
      },
    };
    const scanner = t.start({
      book,
      publisher: checkingPublisher(events, problems),
      startHeight: first,
      mempool: false,
      minBackoffMs: 10,
      pool: failing,
      prefetchBlocks: 4,
    });
    await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');
    expect(failed).toBe(true);
    expect(events).toEqual(Array.from({ length: BLOCKS }, (_, i) => first + i));
    expect(problems).toEqual([]);
  });

  it('tells the pool which blocks the node still has blocks to serve after (all below the tip), so that only the tip block takes every worker', async () => {
    const seen: { height: number; more: boolean | undefined }[] = [];
    const recording: ScanPool = {
      ...pool,
      size: pool.size,
      async scanBlock(rpcId, body, more) {
        const block = await pool.scanBlock(rpcId, body, more);
        seen.push({ height: block.height, more });
        return block;
      },
    };
    const scanner = t.start({ book, startHeight: first, mempool: false, pool: recording, prefetchBlocks: 3 });
    await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');
    const tip = t.node.tipHeight();
    expect(tip).toBe(first + BLOCKS - 1);
    expect(seen.sort((a, b) => a.height - b.height)).toEqual(
      Array.from({ length: BLOCKS }, (_, i) => ({ height: first + i, more: first + i < tip })),
    );
  });

  it('records the same payments when it scans blocks on its own thread (SCAN_WORKERS=0: no pool), a payment of two input keys among them', async () => {
    const { node, store } = t;
    // one more block: a payment spending a P2TR and a P2WPKH coin (A is their sum), beside one that pays no one
    const twoKeys = buildSilentPayment(
      [node.fund('p2tr'), node.fund('p2wpkh')],
      [{ address: book.baseAddress, sats: 7_000_000n }],
      plainScript(4),
    );
    const other = buildSilentPayment(
      [node.fund('p2wpkh')],
      [{ address: randomAddressBook().book.baseAddress, sats: 5_000_000n }],
      plainScript(5),
    );
    node.mine(1, [twoKeys.hex, other.hex]);
    const last = node.tipHeight();
    const scanner = t.start({ book, startHeight: first, mempool: false });
    await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');
    expect(scanner.status().scanned_height).toBe(last);
    for (const [h, txid] of paid)
      expect(store.getPayment(`${txid}:0`)).toMatchObject({ blockHeight: h, amountSats: BigInt(h - first + 1) * 1_000_000n });
    expect(store.getPayment(`${twoKeys.txid}:0`)).toMatchObject({ blockHeight: last, amountSats: 7_000_000n });
    expect(store.getPayment(`${other.txid}:0`)).toBeUndefined();
  });
});
