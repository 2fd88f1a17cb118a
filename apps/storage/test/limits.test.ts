import { openConnection } from '@repo/http/testing';
import { getJson, startTempService, type TempService } from './support/service';

describe('connection limits', () => {
  let running: TempService;
  afterEach(() => running.close());

  it('closes a connection past MAX_CONNECTIONS_PER_IP and accepts again once one ends', async () => {
    running = await startTempService({ MAX_CONNECTIONS_PER_IP: '2' });
    const { port } = running;
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
