import express from 'express';
import request from 'supertest';
import { AppError, ERROR_CODES, HTTP_STATUS_BY_CODE, RpcError, errorHandler, notFoundHandler, toAppError } from '../src';

describe('AppError', () => {
  it('maps every code to a status', () => {
    for (const code of Object.values(ERROR_CODES)) {
      expect(new AppError(code).status).toBe(HTTP_STATUS_BY_CODE[code]);
    }
  });

  it('keeps the cause', () => {
    const cause = new Error('disk on fire');
    expect(new AppError('INTERNAL_ERROR', { cause }).cause).toBe(cause);
  });
});

describe('toAppError', () => {
  it('turns an unknown error into a generic 500 that keeps it as the cause', () => {
    const cause = new Error('secret path /etc/x');
    const err = toAppError(cause);
    expect(err.status).toBe(500);
    expect(err.message).toBe('internal server error');
    expect(err.cause).toBe(cause);
  });

  it('keeps the status of an exposed client error', () => {
    const err = toAppError(Object.assign(new Error('x'), { status: 413, expose: true, type: 'entity.too.large' }));
    expect(err.status).toBe(413);
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('errorHandler', () => {
  function appThatThrows(err: unknown, format?: 'flat' | 'nested') {
    const logged: object[] = [];
    const app = express();
    app.use(express.json());
    app.post('/x', () => {
      throw err;
    });
    app.use(notFoundHandler());
    app.use(errorHandler({ format, logger: { error: (o) => logged.push(o), warn: () => undefined } }));
    return { app, logged };
  }

  it('answers the flat record of an AppError', async () => {
    const { app } = appThatThrows(new AppError('ACCESS_DENIED'));
    const res = await request(app).post('/x');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'access not authorized', code: 'ACCESS_DENIED' });
  });

  it('answers the nested record when asked', async () => {
    const { app } = appThatThrows(new AppError('INVALID_REQUEST', { message: 'sync_type is required', details: 'x' }), 'nested');
    const res = await request(app).post('/x');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'INVALID_REQUEST', message: 'sync_type is required', details: 'x' } });
  });

  it('answers a generic 500 without a stack and logs the cause', async () => {
    const { app, logged } = appThatThrows(new Error('boom at /secret'));
    const res = await request(app).post('/x');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal server error', code: 'INTERNAL_ERROR' });
    expect(JSON.stringify(res.body)).not.toContain('boom');
    expect(logged).toHaveLength(1);
  });

  it('answers 400 for a malformed JSON body', async () => {
    const { app } = appThatThrows(new Error('unreached'));
    const res = await request(app).post('/x').set('Content-Type', 'application/json').send('{nope');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('malformed JSON body');
  });

  it('answers 404 for an unknown route', async () => {
    const { app } = appThatThrows(new Error('unreached'));
    const res = await request(app).get('/nowhere');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });
});

describe('RpcError', () => {
  it('serialises to the JSON-RPC error object', () => {
    expect(JSON.parse(JSON.stringify(new RpcError(-32601, 'Method not found')))).toEqual({ code: -32601, message: 'Method not found' });
  });
});
