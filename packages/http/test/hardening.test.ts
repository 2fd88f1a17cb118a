import express from 'express';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { errorHandler } from '@repo/errors';
import { closeGracefully, generateSelfSignedCertificate, listen } from '@repo/service';
import { answerProtocolErrors, guardServer, jsonBody, jsonDepth, limitConnectionsPerAddress } from '../src';
import { holdSlowConnections, openConnection, rawExchange } from '../src/testing';
import { captureLogger } from './support/capture-logger';

let server: Server;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await closeGracefully(server, 100);
});

function appServer(maxConcurrent = 100, maxConcurrentPerAddress = 100): Server {
  const app = express();
  app.use(jsonBody({ limitBytes: 1024, maxDepth: 8, maxConcurrent, maxConcurrentPerAddress }));
  app.get('/ping', (_req, res) => {
    res.json({ ok: true });
  });
  app.post('/echo', (req, res) => {
    res.json({ body: req.body as unknown });
  });
  app.use(errorHandler());
  return createServer(app);
}

describe('limitConnectionsPerAddress: reserve and deadlines', () => {
  it('keeps a reserve for new addresses while others hold the shared slots', async () => {
    server = appServer();
    const counter = limitConnectionsPerAddress(server, { maxPerAddress: 4, maxTotal: 10, reserve: 2 });
    const { port } = await listen(server, 0, '127.0.0.1');
    sockets.push(...(await holdSlowConnections(port, 5, '127.0.0.2', '/echo', 500)));
    sockets.push(...(await holdSlowConnections(port, 5, '127.0.0.3', '/echo', 500)));
    expect(counter.count('127.0.0.2')).toBe(4);
    expect(counter.count('127.0.0.3')).toBe(4);
    // A third address gets one slot of the reserve, not two.
    sockets.push(...(await holdSlowConnections(port, 2, '127.0.0.4', '/echo', 500)));
    expect(counter.count('127.0.0.4')).toBe(1);
    // A fourth, new address is still answered at once.
    const answer = await rawExchange(port, 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n', { localAddress: '127.0.0.5', timeoutMs: 2_000 });
    expect(answer.status).toBe(200);
  });

  it('logs refused connections at most once a second, each line counting the refusals it stands for', async () => {
    const { logger, lines } = captureLogger();
    server = appServer();
    limitConnectionsPerAddress(server, { maxPerAddress: 1, logger });
    const { port } = await listen(server, 0, '127.0.0.1');
    sockets.push(...(await holdSlowConnections(port, 1, '127.0.0.2', '/echo', 500)));
    const clock = jest.spyOn(Date, 'now').mockReturnValue(3_000_000);
    try {
      for (let i = 0; i < 3; i++) expect(await openConnection(port, 100, '127.0.0.2')).toMatchObject({ closedAtOnce: true });
      clock.mockReturnValue(3_001_000);
      expect(await openConnection(port, 100, '127.0.0.2')).toMatchObject({ closedAtOnce: true });
    } finally {
      clock.mockRestore();
    }
    const refusals = lines.filter((line) => line.msg === 'connection refused: too many connections');
    expect(refusals).toEqual([
      expect.objectContaining({ level: 40, ip: '127.0.0.2', reason: 'per-address cap', refusals: 1 }),
      expect.objectContaining({ ip: '127.0.0.2', refusals: 3 }),
    ]);
  });

  it('brings the per-address cap below the shared pool', async () => {
    server = appServer();
    const counter = limitConnectionsPerAddress(server, { maxPerAddress: 50, maxTotal: 50 });
    expect(counter.limits).toEqual({ maxPerAddress: 44, maxTotal: 50, reserve: 5 });
  });

  it('answers 408 to a slow body and to slow headers once the deadlines pass', async () => {
    server = appServer();
    answerProtocolErrors(server);
    limitConnectionsPerAddress(server, { maxPerAddress: 10, headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const { port } = await listen(server, 0, '127.0.0.1');
    const [body, headers] = await Promise.all([
      rawExchange(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[', {
        timeoutMs: 5_000,
      }),
      rawExchange(port, 'GET /ping HTTP/1.1\r\nHost: x\r\n', { timeoutMs: 5_000 }),
    ]);
    expect(body.status).toBe(408);
    expect(JSON.parse(body.body)).toEqual({ error: 'request timeout: headers or body not received in time', code: 'REQUEST_TIMEOUT' });
    expect(body.ms).toBeLessThan(3_000);
    expect(headers.status).toBe(408);
    expect(headers.ms).toBeLessThan(3_000);
  });
});

describe('answerProtocolErrors', () => {
  it('answers a bad request line 400 and headers over the limit 431 with the error record', async () => {
    server = appServer();
    answerProtocolErrors(server);
    const { port } = await listen(server, 0, '127.0.0.1');
    const bad = await rawExchange(port, 'GARBAGE\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ error: 'malformed HTTP request', code: 'INVALID_REQUEST' });
    const big = await rawExchange(port, `GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ error: 'request headers too large', code: 'HEADERS_TOO_LARGE' });
  });

  it('keeps the answer of a request that asked to close, when bytes follow it (RFC 9112, section 9.6)', async () => {
    server = createServer((_req, res) => {
      // An answer still being written when the client's next bytes arrive.
      setImmediate(() => res.end('answered'));
    });
    answerProtocolErrors(server);
    const { port } = await listen(server, 0, '127.0.0.1');
    const reply = await rawExchange(port, 'GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('answered');
    expect(reply.text).not.toContain('HTTP/1.1 400');
  });

  it("writes the service's own headers on these answers when it gives them", async () => {
    server = appServer();
    answerProtocolErrors(server, { headers: { 'API-Version': '1.0.0' } });
    const { port } = await listen(server, 0, '127.0.0.1');
    const bad = await rawExchange(port, 'GARBAGE\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/\r\nAPI-Version: 1\.0\.0\r\n/);
  });

  it('closes a connection whose TLS handshake did not finish in time at once, writing nothing', async () => {
    const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
    server = createHttpsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: 200 }, (_req, res) => res.end('ok'));
    answerProtocolErrors(server);
    // Listeners run in order: this one sees the socket as answerProtocolErrors left it.
    const seen = new Promise<{ code: string | undefined; destroyed: boolean }>((resolve) =>
      server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => resolve({ code: err.code, destroyed: socket.destroyed })),
    );
    const { port } = await listen(server, 0, '127.0.0.1');
    // The start of a ClientHello, never finished: the handshake deadline passes.
    const stalled = await rawExchange(port, Buffer.from('16030100', 'hex'));
    expect(await seen).toEqual({ code: 'ERR_TLS_HANDSHAKE_TIMEOUT', destroyed: true });
    expect(stalled).toMatchObject({ status: 0, closed: true });
  });

  it('answers plain HTTP on an HTTPS port 400 in plain HTTP with the error record, and serves nothing', async () => {
    const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
    let served = 0;
    server = createHttpsServer({ cert: tls.cert, key: tls.key }, (_req, res) => {
      served += 1;
      res.end('ok');
    });
    answerProtocolErrors(server, { errorBody: (error) => ({ error: { code: error.code, message: error.message } }) });
    const { port } = await listen(server, 0, '127.0.0.1');
    const plain = await rawExchange(port, 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n', { timeoutMs: 3_000 });
    expect(plain.status).toBe(400);
    expect(plain.text).toMatch(/\r\nConnection: close\r\n/);
    expect(JSON.parse(plain.body)).toEqual({
      error: { code: 'INVALID_REQUEST', message: 'plain HTTP sent to a TLS port: connect with https:// or wss://' },
    });
    // With a body, as a client posting to the wrong scheme sends it.
    const body = JSON.stringify({ key: 'a'.repeat(64) });
    const post = await rawExchange(
      port,
      `POST /store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      { timeoutMs: 3_000 },
    );
    expect(post.status).toBe(400);
    expect(served).toBe(0);
  });
});

describe('guardServer: requests no service serves', () => {
  const limits = { maxConnections: 10, maxConnectionsPerIp: 10, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

  it('answers CONNECT 405 with the error record and the service headers, where Node would close the socket', async () => {
    server = appServer();
    guardServer(server, limits, { headers: { 'API-Version': '1.0.0' } });
    const { port } = await listen(server, 0, '127.0.0.1');
    const tunnel = await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(tunnel.status).toBe(405);
    expect(tunnel.text).toMatch(/\r\nAPI-Version: 1\.0\.0\r\n/);
    expect(JSON.parse(tunnel.body)).toEqual({ error: 'CONNECT is not served here: this is not a proxy', code: 'METHOD_NOT_ALLOWED' });
  });

  it("leaves CONNECT to a service's own answer when it has one", async () => {
    server = appServer();
    guardServer(server, limits);
    server.on('connect', (_req, socket: Socket) => socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    const { port } = await listen(server, 0, '127.0.0.1');
    expect((await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')).status).toBe(404);
  });
});

describe('answerProtocolErrors: the log', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs each refusal with the address, the answer and the cause, at most one line a second counting the rest', async () => {
    const { logger, lines } = captureLogger();
    server = appServer();
    answerProtocolErrors(server, { logger });
    const { port } = await listen(server, 0, '127.0.0.1');
    const clock = jest.spyOn(Date, 'now').mockReturnValue(5_000_000);
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.3']) {
      expect((await rawExchange(port, 'GARBAGE\r\n\r\n', { localAddress: from })).status).toBe(400);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'protocol error answered: malformed HTTP request',
      ip: '127.0.0.2',
      status: 400,
      code: 'INVALID_REQUEST',
      refusals: 1,
    });
    clock.mockReturnValue(5_001_001);
    const big = await rawExchange(port, `GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, {
      localAddress: '127.0.0.4',
    });
    expect(big.status).toBe(431);
    expect(lines).toHaveLength(2);
    // The two refusals held back and this one.
    expect(lines[1]).toMatchObject({
      msg: 'protocol error answered: request headers too large',
      ip: '127.0.0.4',
      status: 431,
      refusals: 3,
    });
  });

  it('logs plain HTTP on a TLS port and a failed handshake', async () => {
    const { logger, lines } = captureLogger();
    const tls = await generateSelfSignedCertificate(['localhost', '127.0.0.1']);
    server = createHttpsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: 200 }, (_req, res) => res.end('ok'));
    answerProtocolErrors(server, { logger });
    const { port } = await listen(server, 0, '127.0.0.1');
    const clock = jest.spyOn(Date, 'now').mockReturnValue(7_000_000);
    expect((await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', { localAddress: '127.0.0.5' })).status).toBe(400);
    clock.mockReturnValue(7_001_001);
    await rawExchange(port, Buffer.from('16030100', 'hex'));
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'protocol error answered: plain HTTP sent to a TLS port: connect with https:// or wss://',
        ip: '127.0.0.5',
        status: 400,
        error: 'ERR_SSL_HTTP_REQUEST',
        refusals: 1,
      }),
      expect.objectContaining({
        msg: 'TLS handshake failed: connection closed',
        ip: '127.0.0.1',
        error: 'ERR_TLS_HANDSHAKE_TIMEOUT',
        refusals: 1,
      }),
    ]);
  });
});

describe('jsonBody', () => {
  it('refuses an announced body over the limit at once with 413', async () => {
    server = appServer();
    const { port } = await listen(server, 0, '127.0.0.1');
    const r = await rawExchange(
      port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n',
      {
        timeoutMs: 3_000,
      },
    );
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses nesting past the bound with 400 and parses what is within it', async () => {
    server = appServer();
    const { port } = await listen(server, 0, '127.0.0.1');
    const send = (text: string) =>
      rawExchange(
        port,
        `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n${text}`,
      );
    const deep = await send('['.repeat(100));
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.body)).toMatchObject({ error: 'JSON body nested too deep', code: 'INVALID_REQUEST' });
    const ok = await send('{"a":[[["[[[[[[[[[[ in a string"]]]}');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ body: { a: [[['[[[[[[[[[[ in a string']]] } });
  });

  it("answers 503 past the bodies being read at once, and past one address's share of them", async () => {
    server = appServer(2, 1);
    const { port } = await listen(server, 0, '127.0.0.1');
    const send = (from: string) =>
      rawExchange(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', {
        localAddress: from,
      });
    // 127.0.0.2 gets one slot of two: its second slow body is refused.
    const first = await holdSlowConnections(port, 2, '127.0.0.2', '/echo', 500);
    sockets.push(...first);
    expect(first.length).toBe(1);
    expect((await send('127.0.0.2')).status).toBe(503);
    // Another address may still send a body; with both slots taken, a third is told to retry.
    sockets.push(...(await holdSlowConnections(port, 1, '127.0.0.3', '/echo', 500)));
    const r = await send('127.0.0.4');
    expect(r.status).toBe(503);
    expect(r.text).toMatch(/retry-after: 1/i);
    for (const s of sockets.splice(0)) s.destroy();
    await new Promise((res) => setTimeout(res, 100));
    expect((await send('127.0.0.4')).status).toBe(200);
  });

  it('jsonDepth skips strings and escapes', () => {
    expect(jsonDepth(Buffer.from('[{"a":"\\"[[["}]'), 10)).toBe(2);
  });
});
