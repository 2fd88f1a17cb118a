import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { getJson, randomKey, startService, startTempService, testConfig } from './support/service';

/** What the socket receives: the text so far, and promises of the first answer's body and of the close. */
function collect(socket: Socket): { text: () => string; answered: Promise<void>; closed: Promise<void> } {
  let text = '';
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    if (text.includes('\r\n\r\n{')) answer();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  return { text: () => text, answered, closed };
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
      // A request in progress when the shutdown begins: its head read, its body not all there yet.
      const inProgress = once(running.service.servers.http, 'request');
      socket.write(first.head + first.body.slice(0, 10));
      await inProgress;
      let closedAt: number | undefined;
      const closing = running.service.close().then(() => (closedAt = Date.now()));
      socket.write(first.body.slice(10));
      await received.answered;
      const [head] = received.text().split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(head).toMatch(/\r\nConnection: close/i);
      // The client sends another request anyway: it is not served, the connection ends.
      const second = storeRequest(randomKey());
      if (!socket.destroyed) socket.write(second.head + second.body);
      await received.closed;
      const connectionEndedAt = Date.now();
      expect(received.text().match(/HTTP\/1\.1 /g)).toHaveLength(1);
      await closing;
      // Promptly: close() ends with the last connection, not at the end of its 10 s grace period.
      expect(closedAt! - connectionEndedAt).toBeLessThan(5_000);
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
      const inProgress = once(first.service.servers.http, 'request');
      socket.write(request.head + request.body.slice(0, 10));
      await inProgress;
      const closing = first.service.close();
      socket.write(request.body.slice(10));
      await received.answered;
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
