import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { AppError, errorHandler } from '@repo/errors';
import { chain } from '../src';

function appWith(...handlers: RequestHandler[]) {
  const app = express();
  app.use(chain(...handlers));
  app.get('/', (_req, res) => {
    res.json({ reached: true });
  });
  app.use(errorHandler());
  return app;
}

describe('chain', () => {
  it('runs the handlers in order, then the route', async () => {
    const order: string[] = [];
    const mark =
      (name: string): RequestHandler =>
      (_req, _res, next) => {
        order.push(name);
        next();
      };
    const res = await request(appWith(mark('a'), mark('b'), mark('c'))).get('/');
    expect(res.body).toEqual({ reached: true });
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('stops at next(err), a throw or a rejected promise, and hands the error on', async () => {
    const never: RequestHandler = () => {
      throw new Error('must not run');
    };
    const viaNext: RequestHandler = (_req, _res, next) => next(new AppError('ACCESS_DENIED'));
    const viaThrow: RequestHandler = () => {
      throw new AppError('RATE_LIMITED');
    };
    const viaReject: RequestHandler = async () => {
      throw new AppError('SERVICE_UNAVAILABLE');
    };
    expect((await request(appWith(viaNext, never)).get('/')).status).toBe(403);
    expect((await request(appWith(viaThrow, never)).get('/')).status).toBe(429);
    expect((await request(appWith(viaReject, never)).get('/')).status).toBe(503);
  });

  it('lets a handler answer and end the chain', async () => {
    const answer: RequestHandler = (_req, res) => {
      res.status(204).end();
    };
    expect((await request(appWith(answer)).get('/')).status).toBe(204);
  });
});
