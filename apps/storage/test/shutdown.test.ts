import { connect, type Socket } from 'node:net';
import { getJson, randomKey, startService, startTempService, testConfig } from './support/service';

/** Everything the socket receives, and whether the server has closed it. */
function collect(socket: Socket): { text: () => string; closed: () => boolean } {
  let text = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  return { text: () => text, closed: () => closed };
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return condition();
}

function storeRequest(key: string): { head: string; body: string } {
  const body = JSON.stringify({ key, value: 'abcd' });
  return {
    head: `POST /storage/store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    body,
  };
}

// README, "Run it": SIGINT/SIGTERM stop it gracefully: no new connections, requests in progress
// finish, pending writes are committed. A client that keeps sending on a keep-alive connection
// must not keep the service serving after the shutdown began (until the grace period cuts every
// connection, requests in progress included).
describe('graceful shutdown and keep-alive connections', () => {
  it('answers the request in progress with Connection: close, serves nothing more on that connection, and close() ends promptly', async () => {
    const running = await startTempService();
    const socket = connect(running.port, '127.0.0.1');
    const received = collect(socket);
    try {
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const first = storeRequest(randomKey());
      // A request in progress when the shutdown begins: its body is not all there yet.
      socket.write(first.head + first.body.slice(0, 10));
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      const closing = running.service.close();
      socket.write(first.body.slice(10));
      expect(await until(() => received.text().includes('\r\n\r\n{'), 3_000)).toBe(true);
      const [head] = received.text().split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(head).toMatch(/\r\nConnection: close/i);
      // The client sends another request anyway: it is not served, the connection ends.
      const second = storeRequest(randomKey());
      if (!received.closed()) socket.write(second.head + second.body);
      expect(await until(received.closed, 3_000)).toBe(true);
      expect(received.text().match(/HTTP\/1\.1 /g)).toHaveLength(1);
      await closing;
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      socket.destroy();
      await running.close();
    }
  }, 20_000);

  it('keeps the value acknowledged in the shutdown after a restart on the same DATA_DIR', async () => {
    const first = await startTempService();
    const socket = connect(first.port, '127.0.0.1');
    const received = collect(socket);
    const key = randomKey();
    try {
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const request = storeRequest(key);
      socket.write(request.head + request.body.slice(0, 10));
      await new Promise((r) => setTimeout(r, 100));
      const closing = first.service.close();
      socket.write(request.body.slice(10));
      expect(await until(() => received.text().includes('\r\n\r\n{'), 3_000)).toBe(true);
      expect(received.text()).toMatch(/^HTTP\/1\.1 200 /);
      await closing;
      const second = await startService(testConfig({ DATA_DIR: first.dir }));
      try {
        expect(await getJson(`${second.base}/retrieve/${key}`)).toMatchObject({ status: 200, body: { value: 'abcd' } });
      } finally {
        await second.close();
      }
    } finally {
      socket.destroy();
      await first.close();
    }
  }, 20_000);
});
