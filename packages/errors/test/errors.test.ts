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

describe('errorHandler logs', () => {
  type Line = { level: 'error' | 'warn'; obj: Record<string, unknown>; msg?: string };
  function recorder() {
    const lines: Line[] = [];
    return {
      lines,
      logger: {
        error: (obj: object, msg?: string) => lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
        warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
      },
    };
  }

  it('logs the 503s answered on purpose once per kind and interval, without a stack, counting the others', async () => {
    const { lines, logger } = recorder();
    let clock = 1_000;
    const app = express();
    app.get('/down', () => {
      throw new AppError('SERVICE_UNAVAILABLE', { details: 'backend unavailable', cause: new Error('ECONNREFUSED') });
    });
    app.get('/busy', () => {
      throw new AppError('SERVICE_UNAVAILABLE', { details: 'overloaded' });
    });
    app.use(errorHandler({ logger, now: () => clock }));
    for (let i = 0; i < 5; i++) expect((await request(app).get('/down')).status).toBe(503);
    expect((await request(app).get('/busy')).status).toBe(503);
    clock += 5_000;
    expect((await request(app).get('/down')).status).toBe(503);
    expect(lines.map((l) => [l.level, l.msg, l.obj.kind, l.obj.notLoggedSinceLastLine])).toEqual([
      ['warn', 'answering 503: service unavailable', 'backend unavailable', undefined],
      ['warn', 'answering 503: service unavailable', 'overloaded', undefined],
      ['warn', 'answering 503: service unavailable', 'backend unavailable', 4],
    ]);
    expect(lines[0]!.obj.reason).toBe('service temporarily unavailable: ECONNREFUSED');
    expect(JSON.stringify(lines)).not.toContain('at ');
  });

  it('still logs an unexpected 503 (not an AppError) at error level every time', async () => {
    const { lines, logger } = recorder();
    const app = express();
    app.get('/x', () => {
      throw Object.assign(new Error('upstream said 503'), { status: 503 });
    });
    app.use(errorHandler({ logger }));
    await request(app).get('/x');
    await request(app).get('/x');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'request failed'],
      ['error', 'request failed'],
    ]);
  });

  function lateApp(late: (res: express.Response) => void) {
    const { lines, logger } = recorder();
    const app = express();
    app.get('/late', async (_req, res) => {
      res.status(408).json({ error: 'request timeout', code: 'REQUEST_TIMEOUT' }); // what requestTimeout does
      await new Promise((r) => setTimeout(r, 5));
      late(res);
    });
    app.use(errorHandler({ logger }));
    return { app, lines };
  }

  it('logs a handler that answers after the answer was sent as completed, one warn line, no error', async () => {
    const { app, lines } = lateApp((res) => {
      res.json({ stored: true });
    });
    expect((await request(app).get('/late')).status).toBe(408);
    await new Promise((r) => setTimeout(r, 30));
    expect(lines).toEqual([
      {
        level: 'warn',
        msg: 'request finished after its answer was sent',
        obj: { method: 'GET', path: '/late', status: 408, outcome: 'completed' },
      },
    ]);
  });

  it('logs the error of a handler that fails after the answer was sent with its code', async () => {
    const { app, lines } = lateApp(() => {
      throw new AppError('NOT_FOUND');
    });
    expect((await request(app).get('/late')).status).toBe(408);
    await new Promise((r) => setTimeout(r, 30));
    expect(lines).toEqual([
      {
        level: 'warn',
        msg: 'request finished after its answer was sent',
        obj: { method: 'GET', path: '/late', status: 408, outcome: 'error', code: 'NOT_FOUND', reason: 'not found' },
      },
    ]);
  });

  it('cuts an answer that had started when its handler fails, logging the unexpected error', async () => {
    const { lines, logger } = recorder();
    const app = express();
    app.get('/half', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '100' });
      res.write('part of it');
      throw new Error('disk gone');
    });
    app.use(errorHandler({ logger }));
    await expect(request(app).get('/half')).rejects.toThrow();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([['error', 'request failed after its answer was sent']]);
  });
});

describe('RpcError', () => {
  it('serialises to the JSON-RPC error object', () => {
    expect(JSON.parse(JSON.stringify(new RpcError(-32601, 'Method not found')))).toEqual({ code: -32601, message: 'Method not found' });
  });
});
