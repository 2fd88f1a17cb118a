import express from 'express';
import request from 'supertest';
import { createRateLimiter, parseTrustProxy, rateLimit, requestId, TRUST_NONE } from '../src';

function app(trustProxy: string) {
  const trust = parseTrustProxy(trustProxy);
  const server = express();
  server.set('trust proxy', trust);
  server.use(requestId(trust));
  server.use(rateLimit(createRateLimiter({ perMinute: 1 })));
  server.get('/', (req, res) => {
    res.json({ ip: req.ip });
  });
  return server;
}

describe('parseTrustProxy', () => {
  it('reads express trust proxy values', () => {
    expect(parseTrustProxy(undefined)).toBe(TRUST_NONE);
    expect(parseTrustProxy('')).toBe(TRUST_NONE);
    expect(parseTrustProxy('false')).toBe(TRUST_NONE);
    const one = parseTrustProxy('1');
    expect(one('203.0.113.9', 0)).toBe(true);
    expect(one('203.0.113.9', 1)).toBe(false);
    const list = parseTrustProxy('10.0.0.0/8, loopback');
    expect(list('10.1.2.3', 0)).toBe(true);
    expect(list('127.0.0.1', 0)).toBe(true);
    expect(list('192.168.1.1', 0)).toBe(false);
  });

  it('refuses true and bad entries', () => {
    expect(() => parseTrustProxy('true')).toThrow(/every hop/);
    expect(() => parseTrustProxy('10.0.0.0/99')).toThrow(/addresses/);
    expect(() => parseTrustProxy('not-an-address')).toThrow(/addresses/);
  });
});

describe('behind a trusted proxy', () => {
  it('keys the rate limit on the forwarded client, not on the proxy', async () => {
    const server = app('loopback');
    const first = await request(server).get('/').set('X-Forwarded-For', '198.51.100.1').expect(200);
    expect(first.body.ip).toBe('198.51.100.1');
    await request(server).get('/').set('X-Forwarded-For', '198.51.100.2').expect(200);
    await request(server).get('/').set('X-Forwarded-For', '198.51.100.1').expect(429);
  });

  it('ignores X-Forwarded-For from an untrusted peer', async () => {
    const server = app('');
    const first = await request(server).get('/').set('X-Forwarded-For', '198.51.100.1').expect(200);
    expect(first.body.ip).toMatch(/127\.0\.0\.1|::1/);
    await request(server).get('/').set('X-Forwarded-For', '198.51.100.2').expect(429);
  });
});

describe('request ids', () => {
  it('takes a valid X-Request-Id from a trusted proxy and echoes it', async () => {
    const res = await request(app('loopback')).get('/').set('X-Request-Id', 'abc-123').expect(200);
    expect(res.headers['x-request-id']).toBe('abc-123');
  });

  it('generates one for an untrusted peer, a bad or an absent id', async () => {
    const untrusted = await request(app('')).get('/').set('X-Request-Id', 'abc-123');
    expect(untrusted.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await request(app('loopback')).get('/').set('X-Request-Id', 'has spaces;and<tags>');
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const long = await request(app('loopback')).get('/').set('X-Request-Id', 'a'.repeat(129));
    expect(long.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await request(app('loopback')).get('/');
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
