import { connect, type Socket } from 'node:net';
import { basic, CLIENT_PASSWORD, CLIENT_USER, onHttpMessages, startHarness, type Harness } from './support/helpers';

const BODY = '{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}';
const REQUEST = `POST / HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(CLIENT_USER, CLIENT_PASSWORD)}\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

/** A kept-alive client connection: sends a call, and again as soon as each answer is complete. */
function busyClient(port: number): { socket: Socket; answers: string[]; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  const answers: string[] = [];
  onHttpMessages(socket, ({ head, body }) => {
    answers.push(`${head}\r\n\r\n${body}`);
    if (!socket.destroyed && !socket.writableEnded) socket.write(REQUEST);
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('connect', () => socket.write(REQUEST));
  return { socket, answers, closed };
}

// Graceful shutdown (README, "Run"; SIGTERM → the app's close()): calls in flight are answered,
// and kept-alive clients are told to leave (`Connection: close`), so the server closes as soon as
// they are answered. Before, a client that kept sending on its connection kept it open until the
// grace period (10 s) ran out and its call in flight was cut off without an answer.
describe('rpc-proxy shutdown', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('answers the calls in flight with Connection: close and closes without waiting for the grace period', async () => {
    h = await startHarness();
    h.node.setLatency(100);
    const port = Number(new URL(h.url).port);
    const clients = [busyClient(port), busyClient(port), busyClient(port)];
    while (clients.some((c) => c.answers.length < 2)) await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const closing = h.app.close();
    let timer: NodeJS.Timeout | undefined;
    const closedIn = await Promise.race([
      closing.then(() => Date.now() - started),
      new Promise((r) => (timer = setTimeout(() => r('still open'), 5_000))),
    ]);
    clearTimeout(timer);
    expect(closedIn).toBeLessThan(2_000);
    for (const c of clients) {
      await c.closed;
      const last = c.answers[c.answers.length - 1] as string;
      // The call that was in flight got its answer, whole, and the server said it would close.
      expect(last).toMatch(/^HTTP\/1\.1 200 /);
      expect(last).toMatch(/\r\nConnection: close\r\n/i);
      expect(last.endsWith('{"result":101,"error":null,"id":1}\n')).toBe(true);
    }
  });
});
