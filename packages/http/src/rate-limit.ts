import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** Requests allowed per minute per key; 0 disables the minute window. */
  perMinute: number;
  /** Requests allowed per second per key (the burst); 0 disables the second window. */
  perSecond?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
  /** Keys tracked at most; past that the oldest windows are dropped first. */
  maxKeys?: number;
}

/** The verdict for one request. */
export interface RateLimitDecision {
  allowed: boolean;
  /** The minute allowance (`X-RateLimit-Limit`). */
  limit: number;
  /** Requests left in the current minute (`X-RateLimit-Remaining`). */
  remaining: number;
  /** Unix time in seconds when the minute window resets (`X-RateLimit-Reset`). */
  resetAt: number;
  /** Seconds to wait before retrying, when refused (`Retry-After`). */
  retryAfter: number;
}

/** A per-key limiter over two fixed windows: a minute and a one-second burst. */
export interface RateLimiter {
  /** Counts one request of `key` and says whether it may proceed. */
  take(key: string): RateLimitDecision;
  /** Forgets every key. */
  reset(): void;
  /** Number of keys currently tracked. */
  readonly size: number;
}

interface Window {
  minuteStart: number;
  minuteCount: number;
  secondStart: number;
  secondCount: number;
}

/**
 * Creates a rate limiter. Fixed windows keep the state to four numbers per client address and
 * map directly onto the `X-RateLimit-*` headers (docs/README.md, "Limits and refusals").
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const perMinute = options.perMinute;
  const perSecond = options.perSecond ?? 0;
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  if (!Number.isInteger(perMinute) || perMinute < 0) throw new RangeError('"perMinute" expected a non-negative integer');
  if (!Number.isInteger(perSecond) || perSecond < 0) throw new RangeError('"perSecond" expected a non-negative integer');
  const windows = new Map<string, Window>();

  function sweep(t: number): void {
    for (const [key, w] of windows) {
      if (t - w.minuteStart >= 60_000) windows.delete(key);
    }
    // Still full (an address spray): drop the oldest entries, Map order is insertion order.
    for (const key of windows.keys()) {
      if (windows.size < maxKeys) break;
      windows.delete(key);
    }
  }

  return {
    take(key) {
      const t = now();
      let w = windows.get(key);
      if (w === undefined) {
        if (windows.size >= maxKeys) sweep(t);
        w = { minuteStart: t, minuteCount: 0, secondStart: t, secondCount: 0 };
        windows.set(key, w);
      }
      if (t - w.minuteStart >= 60_000) {
        w.minuteStart = t;
        w.minuteCount = 0;
      }
      if (t - w.secondStart >= 1_000) {
        w.secondStart = t;
        w.secondCount = 0;
      }
      const minuteReset = w.minuteStart + 60_000;
      const resetAt = Math.ceil(minuteReset / 1000);
      const limit = perMinute;
      if (perMinute > 0 && w.minuteCount >= perMinute) {
        return { allowed: false, limit, remaining: 0, resetAt, retryAfter: Math.max(1, Math.ceil((minuteReset - t) / 1000)) };
      }
      if (perSecond > 0 && w.secondCount >= perSecond) {
        const remaining = perMinute > 0 ? perMinute - w.minuteCount : 0;
        return { allowed: false, limit, remaining, resetAt, retryAfter: Math.max(1, Math.ceil((w.secondStart + 1_000 - t) / 1000)) };
      }
      w.minuteCount++;
      w.secondCount++;
      const remaining = perMinute > 0 ? perMinute - w.minuteCount : 0;
      return { allowed: true, limit, remaining, resetAt, retryAfter: 0 };
    },
    reset() {
      windows.clear();
    },
    get size() {
      return windows.size;
    },
  };
}

/** Sets the `X-RateLimit-*` headers of docs/README.md, "Limits and refusals" (and `Retry-After` when refused). */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.resetAt),
  };
  if (!decision.allowed) {
    headers['Retry-After'] = String(decision.retryAfter);
    headers['X-RateLimit-Retry-After'] = String(decision.retryAfter);
  }
  return headers;
}

/**
 * Express middleware: counts each request by client address, puts the `X-RateLimit-*`
 * headers on every response, and answers 429 `RATE_LIMITED` with `Retry-After` past the limit.
 */
export function rateLimit(limiter: RateLimiter): RequestHandler {
  return function rateLimit(req, res, next) {
    const decision = limiter.take(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    const headers = rateLimitHeaders(decision);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (decision.allowed) {
      next();
      return;
    }
    next(
      new AppError('RATE_LIMITED', {
        message: 'rate limit exceeded',
        details: `retry after ${decision.retryAfter} s`,
        headers,
      }),
    );
  };
}
