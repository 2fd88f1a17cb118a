import type { Socket } from 'node:net';
import { holdSlowConnections, rawExchange } from '@repo/http/testing';
import { useOfflineService } from './support/service';

// docs/silent-payments.md, "Limits": one address cannot lock others out, parsing is bounded,
// malformed requests get the error record.
describe('silent-payments hardening', () => {
  const fixture = useOfflineService('sp-harden-');
  let port: number;
  const held: Socket[] = [];
  // Malformed requests on purpose: their answers are not checked against the API document.
  const start = async () => {
    port = (await fixture.start({ RATE_LIMIT_PER_MINUTE: '0' }, { contract: false })).port;
  };
  afterEach(() => {
    for (const s of held.splice(0)) s.destroy();
  });
  const post = (path: string, text: string, headers = '') =>
    rawExchange(
      port,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );

  it('an address holding its share with slow bodies leaves another address answered at once (default caps)', async () => {
    await start();
    held.push(...(await holdSlowConnections(port, 50, '127.0.0.2', '/generate-address', 1_000)));
    // At most its 20 connections, and of those at most 4 (a quarter of MAX_CONCURRENT_BODIES) slow bodies.
    expect(fixture.running.service.connections.count('127.0.0.2')).toBeLessThanOrEqual(20);
    const r = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', { localAddress: '127.0.0.3', timeoutMs: 2_000 });
    expect(r.status).toBe(200);
  });

  it('refuses an announced body over MAX_BODY_BYTES at once with 413', async () => {
    await start();
    const r = await rawExchange(
      port,
      'POST /generate-address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n',
      { timeoutMs: 3_000 },
    );
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'request body too large', code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses JSON nested past the bound with 400', async () => {
    await start();
    const r = await post('/generate-address', '['.repeat(10_000));
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ error: 'JSON body nested too deep', code: 'INVALID_REQUEST' });
  });

  it.each(['/payments/%zz', '/payments/%ff%fe', '/payments/%E0%A4%A'])('answers %s with 400 and the error record', async (path) => {
    await start();
    const r = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: 'malformed percent-encoding in the path', code: 'INVALID_REQUEST' });
  });

  it('answers protocol errors (bad request line, headers over 16 KB) with the error record', async () => {
    await start();
    const bad = await rawExchange(port, 'GET\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ error: 'malformed HTTP request', code: 'INVALID_REQUEST' });
    const big = await rawExchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ error: 'request headers too large', code: 'HEADERS_TOO_LARGE' });
  });
});

describe('silent-payments labels: cap, write token, characters', () => {
  const fixture = useOfflineService('sp-labels-');
  let port: number;
  const start = async (env: Record<string, string> = {}) => {
    port = (await fixture.start({ RATE_LIMIT_PER_MINUTE: '0', ...env }, { contract: false })).port;
  };
  const generate = (body: unknown, headers = '') => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return rawExchange(
      port,
      `POST /generate-address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  };

  it('answers 409 with a clear error past MAX_LABELS, and still answers labels that exist', async () => {
    await start({ MAX_LABELS: '3' });
    for (const label of ['a', 'b', 'c']) expect((await generate({ label, amount: 0.001 })).status).toBe(201);
    const over = await generate({ label: 'd', amount: 0.001 });
    expect(over.status).toBe(409);
    expect(JSON.parse(over.body)).toEqual({
      error: 'label limit reached',
      code: 'CONFLICT',
      details: 'this service hands out at most 3 labels (MAX_LABELS); reuse an existing label',
    });
    expect((await generate({ label: 'b', amount: 0.001 })).status).toBe(200);
  });

  it('with SP_API_TOKEN, POST routes need the bearer token; reads stay open', async () => {
    const token = 'sp-token-for-tests-0123456789';
    await start({ SP_API_TOKEN: token });
    const none = await generate({ label: 'x', amount: 0.001 });
    expect(none.status).toBe(401);
    expect(none.text).toMatch(/www-authenticate: Bearer/i);
    expect(JSON.parse(none.body)).toMatchObject({ error: 'authentication required', code: 'UNAUTHORIZED' });
    const wrong = await generate({ label: 'x', amount: 0.001 }, `Authorization: Bearer ${token}x\r\n`);
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toMatchObject({ error: 'invalid token', code: 'UNAUTHORIZED' });
    expect((await generate({ label: 'x', amount: 0.001 }, `Authorization: Bearer ${token}\r\n`)).status).toBe(201);
    expect((await rawExchange(port, 'GET /payments HTTP/1.1\r\nHost: x\r\n\r\n')).status).toBe(200);
  });

  it.each([
    ['U+0085 (next line)', 'a\u0085b', 'U+0085'],
    ['a bidi override', 'pay\u202Eevil', 'U+202E'],
    ['a zero-width joiner', 'a\u200Db', 'U+200D'],
    ['a line separator', 'a\u2028b', 'U+2028'],
    ['a tab', 'a\tb', 'U+0009'],
  ])('rejects a label with %s', async (_what, label, code) => {
    await start();
    const r = await generate({ label, amount: 0.001 });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ error: 'label must not contain control or format characters', code: 'INVALID_REQUEST' });
    expect(JSON.parse(r.body).details).toContain(code);
  });

  it('rejects a label with a lone surrogate and accepts a proper pair', async () => {
    await start();
    const lone = await generate('{"label":"a\\ud800b","amount":0.001}');
    expect(lone.status).toBe(400);
    expect(JSON.parse(lone.body)).toMatchObject({ error: 'label must be valid Unicode', code: 'INVALID_REQUEST' });
    const low = await generate('{"label":"\\udc00","amount":0.001}');
    expect(low.status).toBe(400);
    expect((await generate('{"label":"coffee \\ud83d\\ude00 été","amount":0.001}')).status).toBe(201);
  });

  it('after a restart, finds the address of a stored label from the store (labels loaded as indexes only)', async () => {
    await start();
    const made = JSON.parse((await generate({ label: 'kept', amount: 0.002 })).body) as { address: string };
    // A restart on the same DATA_DIR.
    const { service } = await fixture.start();
    expect(service.book.addressOf(1)).toBe(made.address);
    expect(service.book.addressOf(2)).toBeUndefined();
    expect(service.book.receiver.labels()).toEqual([0, 1]);
  });
});
