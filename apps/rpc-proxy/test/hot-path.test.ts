import { createServer, type Server, type Socket } from 'node:net';
import { createSilentLogger } from '@repo/service';
import { constantTimeStringEqual, createAuthenticator, VERIFIED_HEADER_CACHE_SIZE } from '../src/auth';
import { createResultCache } from '../src/cache';
import { createNodeClient, looksLikeJson, NodeError, type NodeClient } from '../src/node-client';
import { basic, onHttpMessages } from './support/helpers';

describe('looksLikeJson', () => {
  it.each([
    ['{"result":1,"error":null,"id":1}\n', true],
    ['  [{"result":1}]\r\n', true],
    ['[]', true],
    ['<html><body>502</body></html>', false],
    ['{"result":1', false],
    ['Work queue depth exceeded', false],
    ['', false],
    ['\n', false],
    ['{]', false],
  ])('tells %j is JSON-shaped: %s', (text, expected) => {
    expect(looksLikeJson(Buffer.from(text))).toBe(expected);
  });
});

describe('createResultCache', () => {
  const entry = (n: number) => Buffer.alloc(100, n);
  // Each entry costs 2 × 1 (key) + 100 + 64 = 166 bytes: a budget of 700 holds four.
  it('drops the least recently used first, a hit making an entry the most recent', () => {
    const cache = createResultCache(700);
    for (const k of ['a', 'b', 'c', 'd']) cache.set(k, entry(k.charCodeAt(0)));
    expect(cache.get('a')).toEqual(entry(97));
    expect(cache.get('a')).toEqual(entry(97));
    expect(cache.get('c')).toEqual(entry(99));
    cache.set('e', entry(101));
    expect(cache.get('b')).toBeUndefined();
    cache.set('f', entry(102));
    expect(cache.get('d')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('e'), cache.get('f')].map((v) => v?.[0])).toEqual([97, 99, 101, 102]);
    expect(cache.size).toBe(4);
    expect(cache.hits).toBe(7);
    expect(cache.misses).toBe(2);
  });

  it('never keeps an entry larger than a quarter of the budget', () => {
    const cache = createResultCache(700);
    cache.set('big', Buffer.alloc(200));
    expect(cache.get('big')).toBeUndefined();
  });
});

describe('constantTimeStringEqual', () => {
  it.each([
    ['Basic YWxpY2U6cHc=', 'Basic YWxpY2U6cHc=', true],
    ['Basic YWxpY2U6cHg=', 'Basic YWxpY2U6cHc=', false],
    ['Basic YWxpY2U6cHc', 'Basic YWxpY2U6cHc=', false],
    ['Basic YWxpY2U6cHc==', 'Basic YWxpY2U6cHc=', false],
    ['abab', 'ab', false],
    ['ab', 'abab', false],
    ['', 'ab', false],
    ['', '', true],
  ])('compares %j with %j: %s', (given, known, expected) => {
    expect(constantTimeStringEqual(given, known)).toBe(expected);
  });
});

describe('createAuthenticator with verified headers cached', () => {
  const auth = createAuthenticator({ cookie: 'ab'.repeat(32), user: 'alice', password: 'pw', rpcAuth: [] });

  it('answers the same user again for a header it verified, and still refuses wrong ones', () => {
    expect(auth.check(basic('alice', 'pw'))).toEqual({ ok: true, user: 'alice' });
    expect(auth.check(basic('alice', 'pw'))).toEqual({ ok: true, user: 'alice' });
    expect(auth.check(basic('__cookie__', 'ab'.repeat(32)))).toEqual({ ok: true, user: '__cookie__' });
    expect(auth.check(basic('alice', 'pw'))).toEqual({ ok: true, user: 'alice' });
    expect(auth.check(basic('alice', 'pw2'))).toEqual({ ok: false, reason: 'invalid' });
    expect(auth.check(basic('mallory', 'pw'))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('keeps checking correctly past the cache size', () => {
    // Trailing blanks make distinct header values with the same credentials.
    const variants = Array.from({ length: VERIFIED_HEADER_CACHE_SIZE * 2 }, (_, i) => `${basic('alice', 'pw')}${' '.repeat(i)}`);
    for (let round = 0; round < 2; round++) for (const v of variants) expect(auth.check(v)).toEqual({ ok: true, user: 'alice' });
    expect(auth.check(`${basic('alice', 'nope')} `)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('createNodeClient against a raw HTTP server', () => {
  let server: Server;
  let client: NodeClient | undefined;
  const sockets = new Set<Socket>();

  async function start(onRequest: (socket: Socket, count: number) => void): Promise<URL> {
    let count = 0;
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      onHttpMessages(socket, () => onRequest(socket, ++count));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  }

  afterEach(async () => {
    client?.close();
    client = undefined;
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  const options = {
    maxConcurrency: 2,
    batchesInFlight: 1,
    overlapCalls: 4,
    overlapBatches: 3,
    queueLimit: 10,
    timeoutMs: 2000,
    logger: createSilentLogger(),
  };
  const answer = (body: string) =>
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('says the connection closed mid-answer when the node stops after the headers', async () => {
    const url = await start((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"result":');
      setTimeout(() => socket.destroy(), 20);
    });
    client = createNodeClient({ url, ...options });
    await expect(client.call('/', '{}')).rejects.toEqual(new NodeError('unreachable', 'node unreachable (connection closed mid-answer)'));
  });

  it('answers again after the node closed a kept-alive connection', async () => {
    const url = await start((socket, count) => {
      socket.end(answer(`{"result":${count},"error":null,"id":1}\n`));
    });
    client = createNodeClient({ url, ...options });
    for (let i = 1; i <= 3; i++) {
      const reply = await client.call('/', '{}');
      expect(reply.status).toBe(200);
      expect(reply.body.toString()).toBe(`{"result":${i},"error":null,"id":1}\n`);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('passes the body through byte for byte, in several chunks', async () => {
    const body = `{"result":"${'ab'.repeat(100_000)}","error":null,"id":"x"}\n`;
    const url = await start((socket) => {
      const text = answer(body);
      socket.write(text.slice(0, 1000));
      setTimeout(() => socket.write(text.slice(1000)), 10);
    });
    client = createNodeClient({ url, ...options });
    const reply = await client.call('/', '{}');
    expect(reply.body.toString()).toBe(body);
  });

  it("reads a chunked answer, and one that runs to the connection's close", async () => {
    const body = '{"result":1,"error":null,"id":1}\n';
    const url = await start((socket, count) => {
      if (count === 1) {
        const hex = Buffer.byteLength(body).toString(16);
        socket.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${hex}\r\n${body}\r\n`);
        setTimeout(() => socket.write('0\r\n\r\n'), 10);
      } else socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${body}`);
    });
    client = createNodeClient({ url, ...options });
    for (let i = 0; i < 2; i++) {
      const reply = await client.call('/', '{}');
      expect([reply.status, reply.body.toString()]).toEqual([200, body]);
    }
  });

  it('never gives an answer it did not ask for to the next call: the connection is dropped', async () => {
    const url = await start((socket, count) => {
      // The first request gets two answers at once; the second must get its own.
      if (count === 1) socket.write(answer('{"result":1,"error":null,"id":1}\n') + answer('{"result":"intruder","error":null,"id":2}\n'));
      else socket.write(answer(`{"result":${count},"error":null,"id":2}\n`));
    });
    client = createNodeClient({ url, ...options });
    expect((await client.call('/', '{}')).body.toString()).toBe('{"result":1,"error":null,"id":1}\n');
    expect((await client.call('/', '{}')).body.toString()).toBe('{"result":2,"error":null,"id":2}\n');
    // The first connection is closed (the server sees it go).
    for (let i = 0; i < 100 && sockets.size > 1; i++) await new Promise((r) => setTimeout(r, 5));
    expect(sockets.size).toBe(1);
  });

  it('sends a call again, once, on a new connection when the node closed the kept-alive one it went out on before answering', async () => {
    const url = await start((socket, count) => {
      if (count === 2) socket.destroy();
      else socket.write(answer(`{"result":${count},"error":null,"id":1}\n`));
    });
    client = createNodeClient({ url, ...options, maxConcurrency: 1 });
    expect((await client.call('/', '{}')).body.toString()).toBe('{"result":1,"error":null,"id":1}\n');
    // The second call goes out on the first one's connection, which the node drops unanswered.
    expect((await client.call('/', '{}')).body.toString()).toBe('{"result":3,"error":null,"id":1}\n');
  });

  it('sends it again only once: a node that drops every call fails it, after two requests', async () => {
    let requests = 0;
    const url = await start((socket, count) => {
      requests = count;
      if (count === 1) socket.write(answer('{"result":1,"error":null,"id":1}\n'));
      else socket.destroy();
    });
    client = createNodeClient({ url, ...options, maxConcurrency: 1 });
    await client.call('/', '{}');
    await expect(client.call('/', '{}')).rejects.toEqual(new NodeError('unreachable', 'node unreachable (ECONNRESET)'));
    expect(requests).toBe(3);
  });

  it('says what is wrong with an answer that is not HTTP, and sends no request with a path it cannot write', async () => {
    const url = await start((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n'));
    client = createNodeClient({ url, ...options });
    await expect(client.call('/', '{}')).rejects.toEqual(new NodeError('unreachable', 'node unreachable (HPE_INVALID_CONSTANT)'));
    await expect(client.call('/wallet/a b', '{}')).rejects.toEqual(new NodeError('unreachable', 'node unreachable (UND_ERR_INVALID_ARG)'));
  });

  it('closes the connection of a call that timed out, and answers the next on a fresh one', async () => {
    let first: Promise<void> | undefined;
    const url = await start((socket, count) => {
      if (count === 1) first = new Promise((resolve) => socket.once('close', () => resolve()));
      else socket.write(answer('{"result":2,"error":null,"id":1}\n'));
    });
    client = createNodeClient({ url, ...options, timeoutMs: 100 });
    await expect(client.call('/', '{}')).rejects.toEqual(new NodeError('timeout', 'node timed out after 100 ms'));
    // The late answer can no longer reach anyone: the connection it would come on is gone.
    await first;
    expect((await client.call('/', '{}')).body.toString()).toBe('{"result":2,"error":null,"id":1}\n');
  });
});
