import { Agent, createServer, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createSilentLogger, listen } from '@repo/service';
import {
  basic,
  CLIENT_PASSWORD,
  CLIENT_USER,
  onHttpMessages,
  startHarness,
  startProxyApp,
  until,
  type Harness,
  type RawMessage,
} from './support/helpers';

// What HTTP clients see of the proxy's node:http server (docs/rpc-proxy.md, "Endpoint"):
// connections kept, pipelining, odd but valid requests served, malformed ones refused.

const AUTH = basic(CLIENT_USER, CLIENT_PASSWORD);
const body = (id: number, method = 'getblockcount') => `{"jsonrpc":"1.0","id":${id},"method":"${method}","params":[]}`;
const request = (text: string, extra = '') =>
  `POST / HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;

/** A raw client connection that splits what it reads into answers (Content-Length bodies). */
class RawClient {
  readonly socket: Socket;
  readonly answers: RawMessage[] = [];
  readonly closed: Promise<void>;
  private waiters: (() => void)[] = [];

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('error', () => undefined);
    onHttpMessages(this.socket, (answer) => {
      this.answers.push(answer);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** Resolves once `n` answers have arrived in all. */
  async answered(n: number): Promise<void> {
    while (this.answers.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }
}

const header = (head: string, name: string) => new RegExp(`\r\n${name}: ([^\r]*)`, 'i').exec(head)?.[1];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rpc-proxy to its HTTP clients', () => {
  let h: Harness;
  let port: number;
  const clients: RawClient[] = [];
  const client = () => {
    const c = new RawClient(port);
    clients.push(c);
    return c;
  };
  const start = async (env: Record<string, string> = {}) => {
    h = await startHarness(env);
    port = Number(new URL(h.url).port);
  };
  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    await h.close();
  });

  it('answers calls on a kept-alive connection with its headers and the request id', async () => {
    await start();
    const c = client();
    for (let id = 1; id <= 3; id++) {
      c.send(request(body(id)));
      await c.answered(id);
    }
    expect(c.answers.map((a) => a.body)).toEqual([1, 2, 3].map((id) => `{"result":101,"error":null,"id":${id}}\n`));
    for (const { head, body: text } of c.answers) {
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(header(head, 'content-type')).toBe('application/json');
      expect(header(head, 'content-length')).toBe(String(Buffer.byteLength(text)));
      expect(header(head, 'x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Date(header(head, 'date') as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(header(head, 'keep-alive')).toBe('timeout=30');
    }
  });

  it("keeps real HTTP/1.1 clients' connections: Node's http.Agent and fetch (undici) send each call on one", async () => {
    await start();
    let connections = 0;
    h.app.servers.http.on('connection', () => connections++);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const viaAgent = (id: number) =>
      new Promise<{ text: string; reused: boolean }>((resolve, reject) => {
        const req = httpRequest(
          h.url,
          { method: 'POST', agent, headers: { authorization: AUTH, 'content-type': 'application/json' } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ text, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end(body(id));
      });
    try {
      const answers = [];
      for (let id = 1; id <= 3; id++) answers.push(await viaAgent(id));
      expect(answers).toEqual([1, 2, 3].map((id) => ({ text: `{"result":101,"error":null,"id":${id}}\n`, reused: id > 1 })));
    } finally {
      agent.destroy();
    }
    for (let id = 4; id <= 6; id++) {
      const res = await fetch(h.url, {
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': 'application/json' },
        body: body(id),
      });
      expect(await res.text()).toBe(`{"result":101,"error":null,"id":${id}}\n`);
      // undici gives the connection back to its pool a moment after the body has been read.
      await pause(20);
    }
    expect(connections).toBe(2);
  });

  it('keeps an HTTP/1.0 connection only when the client asks', async () => {
    await start();
    const v10 = (id: number, extra = '') => request(body(id), extra).replace('HTTP/1.1', 'HTTP/1.0');
    // Asked for: the answer says keep-alive (HTTP/1.0's default is close), and a second call goes on the same connection.
    const kept = client();
    kept.send(v10(1, 'Connection: keep-alive\r\n'));
    await kept.answered(1);
    expect(header(kept.answers[0]?.head as string, 'connection')).toMatch(/^keep-alive$/i);
    kept.send(v10(2, 'Connection: keep-alive\r\n'));
    await kept.answered(2);
    expect(kept.answers.map((a) => a.body)).toEqual(['{"result":101,"error":null,"id":1}\n', '{"result":101,"error":null,"id":2}\n']);
    expect(kept.socket.destroyed).toBe(false);
    // Not asked for: answered, then closed.
    const plain = client();
    plain.send(v10(3));
    await plain.closed;
    expect(plain.answers.map((a) => a.body)).toEqual(['{"result":101,"error":null,"id":3}\n']);
    expect(header(plain.answers[0]?.head as string, 'connection')).toMatch(/^close$/i);
  });

  it("writes the node's bytes as they are, short answers and long ones", async () => {
    // A node whose answers carry UTF-8 of one to four bytes a character: 75 bytes, and 30 KB.
    const text = (id: number) =>
      `{"result":{"label":"caf\u00e9 \u20ac \ud83d\ude00 ${id === 1 ? 'x' : 'y'.repeat(30_000)}"},"error":null,"id":${id}}\n`;
    const fake = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end(text((JSON.parse(raw) as { id: number }).id)));
    });
    const { port: fakePort } = await listen(fake, 0, '127.0.0.1');
    const proxy = await startProxyApp(
      { BITCOIND_RPC_URL: `http://127.0.0.1:${fakePort}`, BITCOIND_RPC_USER: 'u', BITCOIND_RPC_PASSWORD: 'p' },
      createSilentLogger(),
    );
    h = {
      app: proxy.app,
      async close() {
        await proxy.close();
        fake.closeAllConnections();
        await new Promise((r) => fake.close(r));
      },
    } as unknown as Harness;
    port = Number(new URL(proxy.url).port);
    const c = client();
    for (const id of [1, 2]) {
      c.send(request(`{"jsonrpc":"1.0","id":${id},"method":"getwalletinfo","params":[]}`).replace('POST / ', 'POST /wallet/w '));
      await c.answered(id);
    }
    // The raw client reads bytes as latin1: one character a byte.
    expect(c.answers.map((a) => a.body)).toEqual([1, 2].map((id) => Buffer.from(text(id), 'utf8').toString('latin1')));
    expect(c.answers.map((a) => Number(header(a.head, 'content-length')))).toEqual([1, 2].map((id) => Buffer.byteLength(text(id))));
  });

  it('counts a call whose client left before the answer with status 0', async () => {
    await start();
    h.node.setLatency(150);
    const status0 = async () =>
      Number(
        /^http_requests_total\{method="POST",route="\/",status="0"\} (\d+)$/m.exec(await (await fetch(`${h.url}/metrics`)).text())?.[1] ??
          0,
      );
    const c = client();
    c.send(request(body(1)));
    while (h.node.stats.inFlight === 0) await pause(5);
    c.socket.destroy();
    while (h.node.stats.inFlight > 0) await pause(5);
    await pause(20);
    expect(await status0()).toBe(1);
  });

  it('serves a call whose header names are in any case and whose Content-Length has blanks around it', async () => {
    await start();
    const c = client();
    const text = body(4);
    c.send(
      `POST / HTTP/1.1\r\nhost: x\r\nAUTHORIZATION: ${AUTH}\r\ncontent-LENGTH: \t${text.length} \r\nX-Other: content-length: 1\r\n\r\n${text}`,
    );
    await c.answered(1);
    expect(c.answers[0]?.body).toBe('{"result":101,"error":null,"id":4}\n');
  });

  it('answers pipelined calls in the order they were sent', async () => {
    await start();
    h.node.setLatency(30);
    const c = client();
    c.send(request(body(1, 'getblockcount')) + request(body(2, 'getbestblockhash')) + request(body(3, 'getblockcount')));
    await c.answered(3);
    expect(c.answers.map((a) => JSON.parse(a.body).id)).toEqual([1, 2, 3]);
    expect(JSON.parse(c.answers[1]?.body as string).result).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers a call that arrives in parts, and the next ones on that connection', async () => {
    await start();
    const c = client();
    const whole = request(body(1));
    c.send(whole.slice(0, 40));
    await pause(50);
    c.send(whole.slice(40));
    await c.answered(1);
    c.send(request(body(2)));
    await c.answered(2);
    expect(c.answers.map((a) => a.body)).toEqual([1, 2].map((id) => `{"result":101,"error":null,"id":${id}}\n`));
  });

  it('serves other routes on a connection that carried a call', async () => {
    await start();
    const c = client();
    c.send(request(body(1)));
    await c.answered(1);
    c.send('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.answered(2);
    expect(c.answers[1]?.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(c.answers[1]?.body as string)).toMatchObject({ status: 'ok' });
  });

  it('serves what is valid if unusual: a chunked body, Expect, HTTP/1.0, a repeated header, many headers', async () => {
    await start();
    const text = body(7);
    const chunked = `POST / HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nTransfer-Encoding: chunked\r\n\r\n${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`;
    const many = Array.from({ length: 40 }, (_, i) => `X-Extra-${i}: ${i}\r\n`).join('');
    const cases = [
      chunked,
      request(text, 'Expect: 100-continue\r\n'),
      request(text).replace('HTTP/1.1', 'HTTP/1.0'),
      request(text, 'Accept: a\r\nAccept: b\r\n'),
      request(text, many),
    ];
    for (const [i, raw] of cases.entries()) {
      const c = client();
      c.send(raw);
      // Expect: node:http says 100 Continue first, then answers.
      await c.answered(raw.includes('Expect:') ? 2 : 1);
      const last = c.answers[c.answers.length - 1] as { head: string; body: string };
      expect([i, last.head.split('\r\n')[0]]).toEqual([i, expect.stringMatching(/^HTTP\/1\.[01] 200 OK$/)]);
      expect(last.body).toBe('{"result":101,"error":null,"id":7}\n');
    }
  });

  it('refuses a call without Host (400, connection closed)', async () => {
    await start();
    const c = client();
    c.send(request(body(1)).replace('Host: x\r\n', ''));
    await c.closed;
    // (node:http's own bare 400, its empty body chunked)
    expect(c.answers[0]?.head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
  });

  it('refuses a body length told twice, two lengths, a space before the colon, bare LF line ends: 400 with an envelope', async () => {
    await start();
    const text = body(1);
    const cases = [
      request(text, `Transfer-Encoding: chunked\r\n`),
      request(text, `Content-Length: ${text.length + 5}\r\n`),
      request(text).replace('Content-Length:', 'Content-Length :'),
      `POST / HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: -1\r\n\r\n`,
      // Line ends without CR: the first CRLF CRLF is inside the body, where no head ends.
      `POST / HTTP/1.1\nHost: x\nAuthorization: ${AUTH}\nContent-Length: 9\n\n[1\r\n\r\n2]`,
    ];
    for (const [i, raw] of cases.entries()) {
      const c = client();
      c.send(raw);
      await c.closed;
      expect([i, c.answers.length, c.answers[0]?.head.split('\r\n')[0]]).toEqual([i, 1, 'HTTP/1.1 400 Bad Request']);
      expect(JSON.parse(c.answers[0]?.body as string)).toEqual({
        result: null,
        error: { code: -32600, message: 'malformed HTTP request' },
        id: null,
      });
    }
    const after = client();
    after.send(request(body(2)));
    await after.answered(1);
    expect(after.answers[0]?.body).toBe('{"result":101,"error":null,"id":2}\n');
  });

  it.each(['Connection', 'Proxy-Connection'])('closes the connection after a call that asks it (%s: close)', async (name) => {
    await start();
    const c = client();
    c.send(request(body(1), `${name}: close\r\n`) + request(body(2)));
    await c.closed;
    expect(c.answers).toHaveLength(1);
    expect(c.answers[0]?.body).toBe('{"result":101,"error":null,"id":1}\n');
    expect(header(c.answers[0]?.head as string, 'connection')).toBe('close');
    expect(header(c.answers[0]?.head as string, 'keep-alive')).toBeUndefined();
  });

  it('answers a whole body over MAX_BODY_BYTES 413 and closes the connection', async () => {
    await start({ MAX_BODY_BYTES: '1024' });
    const c = client();
    c.send(
      request(JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'getblockcount', params: [], pad: 'x'.repeat(2000) })) + request(body(2)),
    );
    await c.closed;
    expect(c.answers).toHaveLength(1);
    expect(c.answers[0]?.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(header(c.answers[0]?.head as string, 'connection')).toBe('close');
  });

  it('answers a connection that sends nothing 408 once HEADERS_TIMEOUT_MS has passed, and closes an idle one after the keep-alive timeout', async () => {
    await start({ HEADERS_TIMEOUT_MS: '200', REQUEST_TIMEOUT_MS: '200' });
    const silent = client();
    await silent.closed;
    expect(silent.answers[0]?.head).toMatch(/^HTTP\/1\.1 408 /);
    h.app.servers.http.keepAliveTimeout = 300;
    const idle = client();
    idle.send(request(body(1)));
    await idle.answered(1);
    expect(header(idle.answers[0]?.head as string, 'keep-alive')).toBe('timeout=0');
    const answered = Date.now();
    await idle.closed;
    expect(Date.now() - answered).toBeGreaterThanOrEqual(250);
    expect(idle.answers).toHaveLength(1);
  });

  it('answers a burst of pipelined calls all, in order', async () => {
    await start({ RATE_LIMIT_PER_MINUTE: '0' });
    const c = client();
    const ids = Array.from({ length: 2_000 }, (_, i) => i + 1);
    const burst = ids.map((id) => request(body(id))).join('');
    expect(burst.length).toBeGreaterThan(64 * 1024);
    c.send(burst);
    await c.answered(ids.length);
    expect(c.answers.map((a) => JSON.parse(a.body).id)).toEqual(ids);
  });

  it('answers every call of a client that stops reading its answers, in order, once it reads again', async () => {
    await start({ RATE_LIMIT_PER_MINUTE: '0' });
    const c = client();
    c.socket.pause();
    const ids = Array.from({ length: 3_000 }, (_, i) => i + 1);
    c.send(ids.map((id) => request(body(id))).join(''));
    await until(() => h.node.stats.total > 0, 'calls reaching the node', 20_000);
    c.socket.resume();
    await c.answered(ids.length);
    expect(c.answers.map((a) => JSON.parse(a.body).id)).toEqual(ids);
  }, 60_000);

  it('closes idle kept-alive connections at once when the proxy shuts down', async () => {
    await start();
    const c = client();
    c.send(request(body(1)));
    await c.answered(1);
    const started = Date.now();
    await h.app.close();
    await c.closed;
    // Not the 10 s grace period, which a connection left open would hold the shutdown for.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('drops a call whose client sent its FIN after it (half-closed clients are not answered)', async () => {
    await start();
    h.node.setLatency(50);
    const c = client();
    c.socket.end(request(body(1)));
    await c.closed;
    expect(c.answers).toEqual([]);
  });
  // issue 66 §6: hostile and odd requests get an answer, never a forward or a silent close.
  it('answers a wallet name that is not valid percent-encoding 400, without asking the node', async () => {
    await start();
    const c = client();
    c.send(request(body(1)).replace('POST / ', 'POST /wallet/w%zz '));
    await c.answered(1);
    expect(c.answers[0]?.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(c.answers[0]?.body as string)).toEqual({
      result: null,
      error: { code: -32600, message: 'malformed percent-encoding in the wallet name' },
      id: null,
    });
    expect(h.node.stats.total).toBe(0);
  });

  it('answers CONNECT 405 with an envelope and closes, rather than dropping the connection', async () => {
    await start();
    const c = client();
    c.send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    await c.closed;
    expect(c.answers[0]?.head).toMatch(/^HTTP\/1\.1 405 /);
    expect(JSON.parse(c.answers[0]?.body as string)).toEqual({
      result: null,
      error: { code: -1, message: 'JSONRPC server handles only POST requests' },
      id: null,
    });
  });

  it('answers a request with two Host headers 400 (RFC 9112 §3.2), on every route', async () => {
    await start();
    for (const raw of [request(body(1), 'Host: y\r\n'), 'GET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n']) {
      const c = client();
      c.send(raw);
      await c.closed;
      expect(c.answers[0]?.head).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(c.answers[0]?.body as string)).toEqual({
        result: null,
        error: { code: -32600, message: 'more than one Host header' },
        id: null,
      });
    }
    expect(h.node.stats.total).toBe(0);
  });
});
