import express from 'express';
import request from 'supertest';
import { errorHandler } from '@repo/errors';
import { createRateLimiter, rateLimit } from '../src';

describe('createRateLimiter', () => {
  it('allows the burst, then refuses until the next second', () => {
    let t = 1_000_000;
    const limiter = createRateLimiter({ perMinute: 100, perSecond: 10, now: () => t });
    for (let i = 0; i < 10; i++) expect(limiter.take('a').allowed).toBe(true);
    const refused = limiter.take('a');
    expect(refused).toMatchObject({ allowed: false, remaining: 90, retryAfter: 1 });
    t += 1_000;
    expect(limiter.take('a').allowed).toBe(true);
  });

  it('refuses past the minute allowance until the minute window resets', () => {
    let t = 0;
    const limiter = createRateLimiter({ perMinute: 100, perSecond: 10, now: () => t });
    for (let second = 0; second < 10; second++) {
      for (let i = 0; i < 10; i++) expect(limiter.take('a').allowed).toBe(true);
      t += 1_000;
    }
    const refused = limiter.take('a');
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetAt: 60, retryAfter: 50 });
    t = 60_000;
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 99 });
  });

  it('counts each address apart', () => {
    const limiter = createRateLimiter({ perMinute: 1, now: () => 0 });
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('b').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
  });

  it('keeps at most maxKeys addresses', () => {
    const limiter = createRateLimiter({ perMinute: 5, now: () => 0, maxKeys: 100 });
    for (let i = 0; i < 1000; i++) limiter.take(`10.0.${i >> 8}.${i & 255}`);
    expect(limiter.size).toBeLessThanOrEqual(100);
  });
});

describe('rateLimit middleware', () => {
  it('sets the X-RateLimit headers and answers 429 with Retry-After', async () => {
    const app = express();
    app.use(rateLimit(createRateLimiter({ perMinute: 2, perSecond: 10 })));
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    app.use(errorHandler());
    const first = await request(app).get('/');
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    await request(app).get('/');
    const limited = await request(app).get('/');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ error: 'rate limit exceeded', code: 'RATE_LIMITED' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ratelimit-retry-after']).toBe(limited.headers['retry-after']);
  });
});
