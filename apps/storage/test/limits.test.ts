import { openConnection } from '@repo/http/testing';
import { getJson, startTempService, type TempService } from './support/service';
import { eventually } from './support/wait';

describe('connection limits', () => {
  let running: TempService;
  afterEach(() => running.close());

  it('closes a connection past MAX_CONNECTIONS_PER_IP and accepts again once one ends', async () => {
    running = await startTempService({ MAX_CONNECTIONS_PER_IP: '2' });
    const { port } = running;
    const first = await openConnection(port);
    const second = await openConnection(port);
    await eventually(() => running.service.connections.count('127.0.0.1') === 2);
    // Given all the time a busy machine needs: the server closes it at once, so it never waits that long.
    const third = await openConnection(port, 60_000);
    expect([first.closedAtOnce, second.closedAtOnce, third.closedAtOnce]).toEqual([false, false, true]);
    expect(running.service.connections.refused).toBe(1);
    first.socket.destroy();
    second.socket.destroy();
    await eventually(() => running.service.connections.count('127.0.0.1') === 0);
    expect((await getJson(`${running.base}/health`)).status).toBe(200);
  });
});
