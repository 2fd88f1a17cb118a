import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { parseTrustProxy } from '../src';
import { createExpressApp } from '../src/express-app';

function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino(stream), lines };
}

describe('createExpressApp', () => {
  it('answers without X-Powered-By, with a request id, the client behind a trusted proxy, and one log line', async () => {
    const { logger, lines } = capture();
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
