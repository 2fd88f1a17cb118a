import { openConnection } from '@repo/http/testing';
import { getJson, makeTempDir, removeDir, startService, testConfig, type RunningService } from './support/service';

describe('connection limits', () => {
  let dir: string;
  let running: RunningService;
  afterEach(async () => {
    await running.close();
    removeDir(dir);
  });

  it('closes a connection past MAX_CONNECTIONS_PER_IP and accepts again once one ends', async () => {
    dir = makeTempDir();
    running = await startService(testConfig({ DATA_DIR: dir, MAX_CONNECTIONS_PER_IP: '2' }));
    const port = Number(new URL(running.base).port);
    const first = await openConnection(port);
    const second = await openConnection(port);
    const third = await openConnection(port);
    expect([first.closedAtOnce, second.closedAtOnce, third.closedAtOnce]).toEqual([false, false, true]);
    expect(running.service.connections.refused).toBe(1);
    first.socket.destroy();
    second.socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect((await getJson(`${running.base}/health`)).status).toBe(200);
  });
});
