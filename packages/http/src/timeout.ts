import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/**
 * Answers 408 `REQUEST_TIMEOUT` ("request timeout") when a request has not been answered
 * within `ms`. The handler keeps running; whatever it sends afterwards is dropped.
 */
export function requestTimeout(ms: number): RequestHandler {
  return function requestTimeout(req, res, next) {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.setHeader('Connection', 'close');
      next(new AppError('REQUEST_TIMEOUT'));
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}

/**
 * Sheds load: past `maxInFlight` requests in progress, answers 503 `SERVICE_UNAVAILABLE`
 * ("service temporarily unavailable") instead of queueing without bound.
 */
export function overloadGuard(maxInFlight: number): RequestHandler {
  let inFlight = 0;
  return function overloadGuard(_req, res, next) {
    if (inFlight >= maxInFlight) {
      next(new AppError('SERVICE_UNAVAILABLE', { details: 'overloaded', headers: { 'Retry-After': '1' } }));
      return;
    }
    inFlight++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      inFlight--;
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  };
}
