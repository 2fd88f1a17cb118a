import express from 'express';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import request from 'supertest';
import { errorHandler } from '@repo/errors';
import { closeGracefully, listen } from '@repo/service';
import { guardServer, limitConnectionsPerAddress, overloadGuard, requestTimeout } from '../src';
import { openConnection, rawExchange } from '../src/testing';

describe('limitConnectionsPerAddress', () => {
  let server: Server;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await closeGracefully(server, 100);
  });

  it('refuses the connection past the cap and accepts again once one closes', async () => {
    server = createServer((_req, res) => res.end('ok'));
    const counter = limitConnectionsPerAddress(server, { maxPerAddress: 3 });
    const { port } = await listen(server, 0, '127.0.0.1');
    const open = async () => {
      const opened = await openConnection(port);
      sockets.push(opened.socket);
      return opened.closedAtOnce;
    };
    expect([await open(), await open(), await open()]).toEqual([false, false, false]);
    expect(counter.count('127.0.0.1')).toBe(3);
    expect(await open()).toBe(true);
    expect(counter.refused).toBe(1);
    sockets[0]!.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await open()).toBe(false);
    expect(counter.count('127.0.0.1')).toBe(3);
  });
});

describe('requestTimeout', () => {
  it('answers 408 with the spec message when the handler is too slow', async () => {
    const app = express();
    app.use(requestTimeout(50));
    app.get('/slow', (_req, res) => {
      setTimeout(() => {
        if (!res.headersSent) res.send('late');
      }, 300);
    });
    app.get('/fast', (_req, res) => {
      res.send('ok');
    });
    app.use(errorHandler());
    const slow = await request(app).get('/slow');
    expect(slow.status).toBe(408);
    expect(slow.body).toEqual({ error: 'request timeout', code: 'REQUEST_TIMEOUT' });
    expect((await request(app).get('/fast')).status).toBe(200);
  });
});

describe('overloadGuard', () => {
  it('answers 503 past the number of requests in flight', async () => {
    const app = express();
    app.use(overloadGuard(1));
    let release: () => void = () => undefined;
    app.get('/', (_req, res) => {
      release = () => res.send('done');
    });
    app.use(errorHandler());
    const server = createServer(app);
    const { port } = await listen(server, 0, '127.0.0.1');
    try {
      const first = fetch(`http://127.0.0.1:${port}/`);
      await new Promise((r) => setTimeout(r, 50));
      const second = await fetch(`http://127.0.0.1:${port}/`);
      expect(second.status).toBe(503);
      expect(await second.json()).toMatchObject({ error: 'service temporarily unavailable', code: 'SERVICE_UNAVAILABLE' });
      release();
      expect((await first).status).toBe(200);
    } finally {
      await closeGracefully(server, 100);
    }
  });
});

describe('guardServer', () => {
  let server: Server;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await closeGracefully(server, 100);
  });

  it('applies the configured caps and deadlines and answers protocol errors with the error record', async () => {
    server = createServer((_req, res) => res.end('ok'));
    const counter = guardServer(server, { maxConnectionsPerIp: 2, maxConnections: 10, headersTimeoutMs: 1_500, requestTimeoutMs: 3_000 });
    expect(counter.limits).toEqual({ maxPerAddress: 2, maxTotal: 10, reserve: 1 });
    expect(server.headersTimeout).toBe(1_500);
    expect(server.requestTimeout).toBe(3_000);
    const { port } = await listen(server, 0, '127.0.0.1');
    const bad = await rawExchange(port, 'NOT HTTP\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ error: 'malformed HTTP request' });
    for (let i = 0; i < 2; i++) sockets.push((await openConnection(port)).socket);
    expect((await openConnection(port)).closedAtOnce).toBe(true);
  });
});
