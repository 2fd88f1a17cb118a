import express from 'express';
import { createServer } from 'node:http';
import { AppError, errorHandler, notFoundHandler } from '@repo/errors';
import pino from 'pino';
import request from 'supertest';
import { parseTrustProxy, requestTimeout, TRUST_NONE } from '../src';
import { createExpressApp, serveExpress } from '../src/express-app';
import { rawExchange } from '../src/testing';
import { closeGracefully, listen } from '@repo/service';
import { captureLogger } from './support/capture-logger';

describe('createExpressApp', () => {
  it('answers without X-Powered-By, with a request id, the client behind a trusted proxy, and one log line', async () => {
    const { logger, lines } = captureLogger();
    const order: string[] = [];
    const app = createExpressApp({
      trustProxy: parseTrustProxy('loopback'),
      logger,
      use: [
        (_req, _res, next) => {
          order.push('use');
          next();
        },
      ],
    });
    app.get('/who', (req, res) => {
      order.push('route');
      res.json({ ip: req.ip });
    });
    const res = await request(app).get('/who').set('X-Forwarded-For', '203.0.113.7').set('X-Request-Id', 'abc-123');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ip: '203.0.113.7' });
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(res.headers['etag']).toBeDefined();
    expect(order).toEqual(['use', 'route']);
    await new Promise((r) => setTimeout(r, 20));
    expect(lines).toEqual([expect.objectContaining({ path: '/who', status: 200, ip: '203.0.113.7', request_id: 'abc-123' })]);
  });

  it('answers 400 to a request with two Host fields (RFC 9112, section 3.2), and serves one with a single Host', async () => {
    const app = createExpressApp({ trustProxy: TRUST_NONE, logger: pino({ level: 'silent' }) });
    app.get('/who', (_req, res) => {
      res.json({ ok: true });
    });
    app.use(errorHandler());
    const server = createServer(serveExpress(app));
    const { port } = await listen(server, 0, '127.0.0.1');
    try {
      const twice = await rawExchange(port, 'GET /who HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n');
      expect(twice.status).toBe(400);
      expect(JSON.parse(twice.body)).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringContaining('Host') });
      const once = await rawExchange(port, 'GET /who HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n');
      expect(once.status).toBe(200);
    } finally {
      await closeGracefully(server, 100);
    }
  });

  it("answers OPTIONS with the 404 error record, not express's 200 text/plain with Allow, and counts it after `use`", async () => {
    const seen: string[] = [];
    const app = createExpressApp({
      trustProxy: TRUST_NONE,
      logger: pino({ level: 'silent' }),
      use: [
        (req, _res, next) => {
          seen.push(req.method);
          next();
        },
      ],
    });
    const router = express.Router();
    router.get('/things', (_req, res) => {
      res.json([]);
    });
    app.use(router);
    app.use(errorHandler());
    const res = await request(app).options('/things');
    expect(res.status).toBe(404);
    expect(res.headers['allow']).toBeUndefined();
    expect(res.body).toEqual({ error: 'no such endpoint: OPTIONS /things', code: 'NOT_FOUND' });
    expect(seen).toEqual(['OPTIONS']);
    await request(app).get('/things').expect(200);
  });

  it('drops the automatic ETag when asked, and ignores forwarded headers from untrusted peers', async () => {
    const app = createExpressApp({ trustProxy: parseTrustProxy(''), logger: pino({ level: 'silent' }), etag: false });
    app.get('/who', (req, res) => {
      res.json({ ip: req.ip });
    });
    const res = await request(app).get('/who').set('X-Forwarded-For', '203.0.113.7').set('X-Request-Id', 'abc-123');
    expect(res.headers['etag']).toBeUndefined();
    expect(res.body.ip).not.toBe('203.0.113.7');
    expect(res.headers['x-request-id']).not.toBe('abc-123');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('serveExpress', () => {
  // A handler still at work when requestTimeout answers 408: its own answer, or its error, comes
  // after the error handlers have run (the timeout took the request down them).
  function lateApp(late: (res: import('express').Response) => void) {
    const { logger, lines } = captureLogger();
    const app = createExpressApp({ trustProxy: TRUST_NONE, logger });
    app.use(requestTimeout(20));
    app.get('/slow', async (_req, res) => {
      await new Promise((r) => setTimeout(r, 60));
      late(res);
    });
    app.use(notFoundHandler());
    app.use(errorHandler({ logger }));
    return { server: createServer(serveExpress(app, logger)), lines };
  }

  async function settle(lines: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
    for (let i = 0; i < 100 && !lines.some((l) => l.msg === 'request finished after its answer was sent'); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    return lines.filter((l) => l.msg !== 'request');
  }

  it('logs a late answer as one warn line (outcome completed), not a stack on stderr', async () => {
    const { server, lines } = lateApp((res) => {
      res.json({ stored: true });
    });
    const stderr = jest.spyOn(console, 'error');
    const res = await request(server).get('/slow');
    expect(res.status).toBe(408);
    expect(await settle(lines)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'request finished after its answer was sent',
        method: 'GET',
        path: '/slow',
        status: 408,
        outcome: 'completed',
      }),
    ]);
    expect(stderr).not.toHaveBeenCalled();
    stderr.mockRestore();
  });

  it('logs a late error with its code', async () => {
    const { server, lines } = lateApp(() => {
      throw new AppError('NOT_FOUND');
    });
    expect((await request(server).get('/slow')).status).toBe(408);
    expect(await settle(lines)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'request finished after its answer was sent',
        status: 408,
        outcome: 'error',
        code: 'NOT_FOUND',
      }),
    ]);
  });

  it('answers what no handler answered as the error middleware would: a 404 record, a 500 logged with its cause', async () => {
    const { logger, lines } = captureLogger();
    // No 404 handler and no error handler: the final step is all there is.
    const app = createExpressApp({ logger, trustProxy: TRUST_NONE });
    app.get('/boom', () => {
      throw new Error('disk on fire');
    });
    const server = createServer(serveExpress(app, logger));
    const missing = await request(server).get('/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'NOT_FOUND' });
    const failed = await request(server).get('/boom');
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ error: 'internal server error', code: 'INTERNAL_ERROR' });
    expect(lines.find((l) => l.msg === 'request failed')).toMatchObject({ level: 50, path: '/boom', err: { message: 'disk on fire' } });
  });
});
