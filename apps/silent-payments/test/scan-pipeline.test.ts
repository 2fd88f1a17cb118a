import { buildSilentPayment, plainScript } from '@repo/chain-double';
import type { AddressBook } from '../src/address-book';
import type { AnswerReading, ChainRpcClient } from '../src/chain-rpc';
import { ChainRpcError } from '../src/chain-rpc';
import { createMemoryLogger } from '@repo/service';
import { createNoopPublisher, type Publisher } from '../src/publisher';
import { waitFor } from './support/fake-relay';
import { randomAddressBook, useScannerParts } from './support/scanner-parts';

const BLOCKS = 9;

/**
 * The catch-up pipeline (docs/silent-payments.md, "Catching up") against the chain double, its
 * blocks made to come back out of height order.
 */
describe('scanner catch-up pipeline', () => {
  const t = useScannerParts('sp-pipeline-');
  let book: AddressBook;
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
  });

  /**
   * Records BlockScanned events and checks, as each is published, that its block is stored whole
   * and nothing above it: the store is read when the event is published (SQLite's reads run at
   * once), the answers are compared when they arrive, pushed to `checks` for the test to await.
   */
  function checkingPublisher(events: number[], problems: string[], checks: Array<Promise<void>> = []): Publisher {
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
            const read = store.getPayment(`${txid}:0`);
            checks.push(
              read.then((payment) => {
                const stored = payment !== undefined;
                if (stored !== h <= height) problems.push(`at ${height}: the payment of ${h} ${stored ? 'stored' : 'missing'}`);
              }),
            );
          }
        }
        return noop.publish(type, data);
      },
    };
  }

  it.each([
    [3, 1],
    [3, 2],
    [1, 2],
  ])(
    'applies blocks in order and each one whole, with at most %i blocks fetched ahead and %i requests at a time (at most the blocks ahead), though the node answers out of order',
    async (prefetch, fetchConcurrency) => {
      const atOnce = Math.min(prefetch, fetchConcurrency);
      const order: number[] = [];
      const events: number[] = [];
      const problems: string[] = [];
      const checks: Array<Promise<void>> = [];
      const { rpc, store } = t;
      const publisher = checkingPublisher(events, problems, checks);
      // counts the blocks asked of the node that are not applied yet
      let inFlight = 0;
      let most = 0;
      // and the requests the node is serving at once
      let requesting = 0;
      let mostAtOnce = 0;
      let sent = 0;
      const counted: ChainRpcClient = {
        ...rpc,
        async call<T>(method: string, params: unknown[], reading?: AnswerReading<T>) {
          if (method !== 'getblock') return rpc.call<T>(method, params);
          most = Math.max(most, ++inFlight);
          mostAtOnce = Math.max(mostAtOnce, ++requesting);
          // the node takes a while to serve a block, the later of two requests out at once first
          const slot = sent++ % atOnce;
          try {
            await new Promise((resolve) => setTimeout(resolve, 20 + (atOnce - slot) * 40));
            const block = await rpc.call<T>(method, params, reading);
            order.push((block as { height: number }).height);
            return block;
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
        prefetchBlocks: prefetch,
        fetchConcurrency,
      });
      await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');

      const heights = Array.from({ length: BLOCKS }, (_, i) => first + i);
      // with two requests out at once, the node's answers did come out of order
      if (atOnce > 1) expect(order).not.toEqual(heights);
      expect([...order].sort((a, b) => a - b)).toEqual(heights);
      expect(events).toEqual(heights);
      await Promise.all(checks);
      expect(problems).toEqual([]);
      expect(most).toBeLessThanOrEqual(prefetch); // fetched ahead, never further than the bound
      expect(mostAtOnce).toBe(atOnce); // blocks asked of the node at once, never more
      for (const [h, txid] of paid)
        expect(await store.getPayment(`${txid}:0`)).toMatchObject({ blockHeight: h, amountSats: BigInt(h - first + 1) * 1_000_000n });
    },
  );

  it('stores nothing of a block whose fetch failed, and retries it', async () => {
    const events: number[] = [];
    const problems: string[] = [];
    const checks: Array<Promise<void>> = [];
    let failed = false;
    const { rpc } = t;
    const failing: ChainRpcClient = {
      ...rpc,
      async call<T>(method: string, params: unknown[], reading?: AnswerReading<T>) {
        const answer = await rpc.call<T>(method, params, reading);
        if (method === 'getblock' && (answer as { height: number }).height === first + 4 && !failed) {
          failed = true;
          throw new ChainRpcError('garbage', 'getblock: the answer is not a block');
        }
        return answer;
      },
    };
    const scanner = t.start({
      rpc: failing,
      book,
      publisher: checkingPublisher(events, problems, checks),
      startHeight: first,
      mempool: false,
      minBackoffMs: 10,
      prefetchBlocks: 4,
    });
    await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');
    expect(failed).toBe(true);
    expect(events).toEqual(Array.from({ length: BLOCKS }, (_, i) => first + i));
    await Promise.all(checks);
    expect(problems).toEqual([]);
  });

  it('reads a block the native reader leaves by JSON.parse, the same payments stored, and says so once', async () => {
    const { rpc, store } = t;
    const { logger, lines } = createMemoryLogger('info');
    let parsed = 0;
    // a node answer the native reader does not take (as through a proxy that rewrites it): its read gives up
    const rewritten: ChainRpcClient = {
      ...rpc,
      call<T>(method: string, params: unknown[], reading?: AnswerReading<T>) {
        if (reading === undefined) return rpc.call<T>(method, params);
        parsed++;
        return rpc.call<T>(method, params, { read: () => undefined, parse: reading.parse });
      },
    };
    const scanner = t.start({ rpc: rewritten, logger, book, startHeight: first, mempool: false });
    await waitFor(() => scanner.status().state === 'synced', 20_000, 'the catch-up');
    expect(parsed).toBe(BLOCKS);
    for (const [h, txid] of paid)
      expect(await store.getPayment(`${txid}:0`)).toMatchObject({ blockHeight: h, amountSats: BigInt(h - first + 1) * 1_000_000n });
    const warned = lines.filter((line) => String(line.msg).startsWith('block answer read by JSON.parse'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, height: first });
  });

  it('records a payment of two input keys, and none for a transaction that pays someone else', async () => {
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
      expect(await store.getPayment(`${txid}:0`)).toMatchObject({ blockHeight: h, amountSats: BigInt(h - first + 1) * 1_000_000n });
    expect(await store.getPayment(`${twoKeys.txid}:0`)).toMatchObject({ blockHeight: last, amountSats: 7_000_000n });
    expect(await store.getPayment(`${other.txid}:0`)).toBeUndefined();
  });
});
