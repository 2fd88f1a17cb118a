import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWallet, startRegtestNode, type RegtestNode } from '@repo/regtest';
import { createMemoryLogger } from '@repo/service';
import { waitFor } from '../support/fake-relay';
import { startService, type RunningService } from '../support/service';

/** pino's number for `warn`. */
const WARN = 40;

/**
 * A node whose tip is older than Core's `-maxtipage` (24 h): a node stopped for a day says
 * `initialblockdownload: true` until a new block arrives, though its blocks are complete
 * (docs/silent-payments.md, "Start height"). Made here by restarting a node with a `-mocktime`
 * two days after its last block.
 */
describe('a real bitcoind whose tip is older than -maxtipage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sp-real-old-tip-'));
  let node: RegtestNode | undefined;
  let running: RunningService | undefined;

  beforeAll(async () => {
    const datadir = join(dir, 'node');
    const first = await startRegtestNode({ datadir });
    await (await createWallet(first, 'miner')).mine(5);
    await first.close();
    const twoDaysLater = Math.floor(Date.now() / 1000) + 2 * 24 * 3600;
    node = await startRegtestNode({ datadir, args: [`-mocktime=${twoDaysLater}`] });
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  afterAll(async () => {
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (dataDir: string, extra: Record<string, string> = {}) => ({
    DATA_DIR: join(dir, dataDir),
    CHAIN_RPC_URL: node!.url,
    CHAIN_RPC_COOKIE_FILE: node!.cookieFile,
    ...extra,
  });

  it('says it is in its initial block download with its blocks complete', async () => {
    expect(await node!.rpc('getblockchaininfo')).toMatchObject({ blocks: 5, headers: 5, initialblockdownload: true });
  });

  it('with SP_START_HEIGHT, scans the complete blocks instead of waiting for a block that may not come', async () => {
    running = await startService(env('with-start', { SP_START_HEIGHT: '3' }));
    const status = () => running!.service.scanner.status();
    await waitFor(() => status().state === 'synced', 20_000, 'the scan of blocks 3 to 5');
    expect(status()).toMatchObject({ start_height: 3, scanned_height: 5, node: { blocks: 5, headers: 5, initialblockdownload: true } });
  });

  it('without a start height, waits for the tip, and says at warn level what it waits for and what ends the wait', async () => {
    const { logger, lines } = createMemoryLogger('info');
    running = await startService(env('without-start'), { logger });
    const status = () => running!.service.scanner.status();
    await waitFor(() => status().state === 'initial_block_download', 20_000, 'the wait');
    const wait = lines.find((l) => String(l.msg).startsWith("waiting for the node's initial block download"));
    expect(wait).toMatchObject({
      level: WARN,
      blocks: 5,
      headers: 5,
      start_height: 'the tip once synced',
      ends_when: expect.stringContaining('SP_START_HEIGHT') as string,
    });
    expect(status().start_height).toBeNull();
  });
});
