import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import express from 'express';
import { expressMessageClasses, isFileRequestUrl } from '../src/file-fast-path';
import { get, startServer, type Harness } from './support/harness';

describe('isFileRequestUrl', () => {
  it.each([
    ['GET', '/dev/app.conf', true],
    ['HEAD', '/dev/app.conf?wait=5', true],
    ['GET', '/dev/sub/app.conf', true],
    ['GET', '/dev//x', true],
    ['GET', '/dev/', false], // one segment and a trailing slash: express matches /health/ to /health
    ['GET', '/openapi.json/', false],
    ['GET', '/health', false],
    ['GET', '/dev?x=/y', false],
    ['GET', 'http://host/dev/app.conf', false], // absolute form: express parses it
    ['POST', '/dev/app.conf', false],
    ['OPTIONS', '/dev/app.conf', false],
  ])('%s %s: %s', (method, url, expected) => {
    expect(isFileRequestUrl(method, url)).toBe(expected);
  });
});

describe('expressMessageClasses', () => {
  it('builds requests and responses that are Node’s, with the app’s express helpers', () => {
    const app = express();
    app.set('trust proxy', false);
    const classes = expressMessageClasses(app);
    const socket = new Socket();
    const req = new classes.IncomingMessage(socket) as IncomingMessage & express.Request;
    req.url = '/dev/app.conf?wait=5';
    const res = new classes.ServerResponse(req) as ServerResponse & express.Response;
    expect(req).toBeInstanceOf(IncomingMessage);
    expect(res).toBeInstanceOf(ServerResponse);
    expect(req.app).toBe(app);
    expect(req.path).toBe('/dev/app.conf');
    expect(req.query).toEqual({ wait: '5' });
    expect(typeof res.json).toBe('function');
    socket.destroy();
  });
});

describe('requests that skip the router and those that do not', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startServer();
  });
  afterEach(async () => {
    await h.close();
  });

  it('answers a file request with the guards’ headers and the file’s', async () => {
    const res = await get(h, '/dev/app.conf');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'api-version': '1.0.0', 'x-encryption-mode': 'psk' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-config-version']).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('leaves the one-segment routes, with a trailing slash too, to express', async () => {
    expect((await get(h, '/info/')).status).toBe(400); // the file route's MISSING_PARAMETER, as before
    expect((await get(h, '/health')).status).toBe(200);
  });

  it('answers other methods on a file path as before: 404, and the automatic OPTIONS answer', async () => {
    const post = await get(h, '/dev/app.conf', {}, 'POST');
    expect(post.status).toBe(404);
    expect(post.json()).toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect((await get(h, '/dev/app.conf', {}, 'OPTIONS')).status).toBe(404);
  });

  it('hands a refusal of the file route to the app’s error handlers, with the request id', async () => {
    const res = await get(h, '/dev/%zz');
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_PARAMETER' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
