import { readFileSync } from 'node:fs';
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
  type Harness,
  type RawMessage,
} from './support/helpers';

// The front end (src/fast-front.ts; docs/rpc-proxy.md, "The front end"): calls that arrive whole
// are answered without node:http's streams, everything else is node:http's, and a client cannot
// tell which answered it.

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

/**
 * Pipelined `getblockcount` calls whose answers (about 280 bytes each) overflow what the kernel
 * buffers for a connection whose reader stopped: its first receive buffer and the largest send
 * buffer (tcp_rmem's default, tcp_wmem's largest), half as much again.
 */
function callsToFill(): number {
  const sizes = (name: string) => readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/).map(Number);
  let bytes = 131_072 + 4_194_304;
  try {
    bytes = (sizes('tcp_rmem')[1] as number) + (sizes('tcp_wmem')[2] as number);
  } catch {
    // no /proc: Linux's defaults
  }
  return Math.ceil((1.5 * bytes) / 280);
}

const header = (head: string, name: string) => new RegExp(`\r\n${name}: ([^\r]*)`, 'i').exec(head)?.[1];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rpc-proxy front end', () => {
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

  it("answers calls on a kept-alive connection itself, with Bitcoin Core's headers and the request id", async () => {
    await start();
    expect(h.app.front).toEqual({ served: 0, handedOff: 0 });
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
      // As Core's answers: no Connection or Keep-Alive line on a connection that stays open (HTTP/1.1's default).
      expect(header(head, 'connection')).toBeUndefined();
      expect(header(head, 'keep-alive')).toBeUndefined();
    }
    expect(h.app.front).toEqual({ served: 3, handedOff: 0 });
    // and says so in /metrics (the scrape itself goes to node:http on a connection of its own)
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/^rpc_proxy_front_served_total 3$/m);
    expect(metrics).toMatch(/^rpc_proxy_front_handed_off_total 1$/m);
  });

  it("keeps real HTTP/1.1 clients' connections without those lines: Node's http.Agent and fetch (undici) send each call on one", async () => {
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
    expect(h.app.front).toEqual({ served: 6, handedOff: 0 });
  });

  it('keeps an HTTP/1.0 connection only when the client asks, as node:http does (the front end leaves HTTP/1.0 to it)', async () => {
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
    // Handed off a connection at a time: the kept one's second call was node:http's already.
    expect(h.app.front).toEqual({ served: 0, handedOff: 2 });
  });

  it("writes the node's bytes as they are, short answers (one string with the head) and long ones (one buffer)", async () => {
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
    expect(proxy.app.front).toEqual({ served: 2, handedOff: 0 });
  });

  it("counts a call whose client left before the answer with status 0, as node:http's", async () => {
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
    expect(h.app.front?.served).toBe(0);
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
    expect(h.app.front).toEqual({ served: 1, handedOff: 0 });
  });

  it('answers pipelined calls in the order they were sent', async () => {
    await start();
    h.node.setLatency(30);
    const c = client();
    c.send(request(body(1, 'getblockcount')) + request(body(2, 'getbestblockhash')) + request(body(3, 'getblockcount')));
    await c.answered(3);
    expect(c.answers.map((a) => JSON.parse(a.body).id)).toEqual([1, 2, 3]);
    expect(JSON.parse(c.answers[1]?.body as string).result).toMatch(/^[0-9a-f]{64}$/);
    expect(h.app.front?.served).toBe(3);
  });

  it('hands a call that arrives in parts to node:http, which answers it and the next ones on that connection', async () => {
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
    expect(h.app.front).toEqual({ served: 0, handedOff: 1 });
  });

  it('hands other routes to node:http on a connection it served', async () => {
    await start();
    const c = client();
    c.send(request(body(1)));
    await c.answered(1);
    c.send('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.answered(2);
    expect(c.answers[1]?.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(c.answers[1]?.body as string)).toMatchObject({ status: 'ok' });
    expect(h.app.front).toEqual({ served: 1, handedOff: 1 });
  });

  it('leaves to node:http what it does not read as plain: a chunked body, Expect, HTTP/1.0, a repeated header, many headers', async () => {
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
    expect(h.app.front).toEqual({ served: 0, handedOff: cases.length });
  });

  it('leaves a call without Host to node:http, which refuses it (400, connection closed)', async () => {
    await start();
    const c = client();
    c.send(request(body(1)).replace('Host: x\r\n', ''));
    await c.closed;
    // (node:http's own bare 400, its empty body chunked)
    expect(c.answers[0]?.head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(h.app.front).toEqual({ served: 0, handedOff: 1 });
  });

  it('refuses what node:http refuses, as node:http does: a body length told twice, two lengths, a space before the colon, bare LF line ends', async () => {
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
    expect(h.app.front?.served).toBe(0);
    // The parser the front end shares between connections starts afresh after each of them.
    const after = client();
    after.send(request(body(2)));
    await after.answered(1);
    expect(after.answers[0]?.body).toBe('{"result":101,"error":null,"id":2}\n');
    expect(h.app.front?.served).toBe(1);
  });

  // Proxy-Connection: llhttp reads it as Connection (the plain reader leaves it to llhttp).
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
    expect(h.app.front?.served).toBe(1);
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

  it('answers a burst of pipelined calls past what it buffers (64 KiB) all, in order, itself (reading on when it had paused)', async () => {
    await start({ RATE_LIMIT_PER_MINUTE: '0' });
    const c = client();
    const ids = Array.from({ length: 2_000 }, (_, i) => i + 1);
    const burst = ids.map((id) => request(body(id))).join('');
    expect(burst.length).toBeGreaterThan(64 * 1024);
    c.send(burst);
    await c.answered(ids.length);
    expect(c.answers.map((a) => JSON.parse(a.body).id)).toEqual(ids);
    expect(h.app.front).toEqual({ served: ids.length, handedOff: 0 });
  });

  it('stops taking calls from a client that does not read its answers, and answers them all, in order, once it reads', async () => {
    await start({ RATE_LIMIT_PER_MINUTE: '0' });
    const c = client();
    // Not read: the answers fill the kernel's buffers (a socket that is not read keeps its first
    // receive buffer; the sender's grows to tcp_wmem's largest), then the proxy's own; the front
    // end then waits for 'drain' before the next call. Enough calls for half as much again.
    c.socket.pause();
    const ids = Array.from({ length: callsToFill() }, (_, i) => i + 1);
    c.send(ids.map((id) => request(body(id))).join(''));
    const forwarded = () => h.node.stats.total;
    // Until the calls reaching the node stop (none for 300 ms).
    let last = -1;
    while (forwarded() !== last) {
      last = forwarded();
      await pause(300);
    }
    expect(forwarded()).toBeGreaterThan(0);
    expect(forwarded()).toBeLessThan(ids.length);
    c.socket.resume();
    await c.answered(ids.length);
    expect(c.answers.map((a) => JSON.parse(a.body).id)).toEqual(ids);
    expect(forwarded()).toBe(ids.length);
    expect(h.app.front).toEqual({ served: ids.length, handedOff: 0 });
  }, 30_000);

  it('closes its idle kept-alive connections at once when the proxy shuts down', async () => {
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

  it('drops a call whose client sent its FIN after it, as node:http does (it does not answer half-closed clients)', async () => {
    await start();
    h.node.setLatency(50);
    const c = client();
    c.socket.end(request(body(1)));
    await c.closed;
    expect(c.answers).toEqual([]);
  });
});
