import type { AnswerReading, ChainRpcClient } from '../src/chain-rpc';
import { waitFor } from './support/fake-relay';
import { randomAddressBook, useScannerParts } from './support/scanner-parts';

const POLL_MS = 400;

/**
 * The block long poll while the node is in its initial block download: such a node finds blocks
 * many times a second, and each `waitfornewblock` returns at once. The scanner waits for the end
 * of the download at the poll interval, so neither the long poll nor the main loop follows it
 * block by block.
 */
describe('scanner long poll, node in its initial block download', () => {
  const t = useScannerParts('sp-longpoll-');

  it('waits SCAN_POLL_INTERVAL_MS between two long polls, and a block they announce does not wake the main loop', async () => {
    const { node, rpc } = t;
    const { book } = randomAddressBook();
    // A node in its download: every waitfornewblock answers at once with a new block.
    let height = node.tipHeight();
    let longPolls = 0;
    const downloading: ChainRpcClient = {
      ...rpc,
      async call<T>(method: string, params?: unknown[], reading?: AnswerReading<T>): Promise<T> {
        if (method !== 'waitfornewblock') return rpc.call<T>(method, params, reading);
        await new Promise((resolve) => setImmediate(resolve)); // an answer over the network
        longPolls++;
        height++;
        return { hash: height.toString(16).padStart(64, '0'), height } as T;
      },
    };
    node.setInitialBlockDownload({ headers: 5_000, progress: 0.3 });
    const scanner = t.start({
      book,
      pollIntervalMs: POLL_MS,
      mempoolIntervalMs: 10,
      longPoll: { rpc: downloading, timeoutMs: 30_000 },
    });
    await waitFor(() => scanner.status().state === 'initial_block_download' && longPolls > 0, 5_000, 'the wait');
    node.clearRequests();
    const before = longPolls;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const infos = node.requests.filter((r) => r.body.includes('getblockchaininfo')).length;
    // Every 400 ms: 2 or 3 in a second of each (block by block, they would be thousands).
    expect(longPolls - before).toBeGreaterThanOrEqual(1);
    expect(longPolls - before).toBeLessThanOrEqual(4);
    expect(infos).toBeGreaterThanOrEqual(1);
    expect(infos).toBeLessThanOrEqual(4);
    expect(scanner.longPollState()).toBe('waiting');

    // Once the download is over, the scanner takes its start height and follows the chain.
    node.setInitialBlockDownload(undefined);
    await waitFor(() => scanner.status().state === 'synced', 5_000, 'synced');
    expect(scanner.status().start_height).toBe(node.tipHeight());
  });
});
