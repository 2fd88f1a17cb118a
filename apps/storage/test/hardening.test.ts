import type { Socket } from 'node:net';
import { holdSlowConnections, rawExchange } from '@repo/http/testing';
import { startTempService, type TempService } from './support/service';
import { eventually } from './support/wait';

// docs/storage.md, "Limits": one address cannot lock others out, parsing is bounded, malformed
// requests get the error record.
describe('storage hardening', () => {
  let running: TempService;
  let port: number;
  const held: Socket[] = [];
  const start = async (env: Record<string, string> = {}) => {
    running = await startTempService(env);
    port = running.port;
  };
  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    await running.close();
  });

  it('an address holding its cap with slow bodies leaves another address answered at once', async () => {
    await start({ MAX_CONNECTIONS: '10', MAX_CONNECTIONS_PER_IP: '10' });
    held.push(...(await holdSlowConnections(port, 10, '127.0.0.2', '/storage/store', 1_000)));
    // On a busy machine the server may close the excess connection after the client's settle time.
    await eventually(() => held.filter((s) => !s.destroyed).length < 10);
    const r = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', { localAddress: '127.0.0.3', timeoutMs: 60_000 });
    expect(r.status).toBe(200);
  });

  it('refuses an announced body over MAX_BODY_BYTES at once with 413', async () => {
    await start();
    const r = await rawExchange(
      port,
      'POST /storage/store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n',
      { timeoutMs: 60_000 },
    );
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses JSON nested past the bound with 400 before parsing it', async () => {
    await start();
    const text = '['.repeat(100_000);
    const r = await rawExchange(
      port,
      `POST /storage/store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n${text}`,
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ error: 'JSON body nested too deep', code: 'INVALID_REQUEST' });
  });

  it.each(['/storage/retrieve/%zz', '/storage/retrieve/%ff%fe', '/storage/touch/%zz', '/storage/%E0%A4%A'])(
    'answers malformed percent-encoding in %s with 400 and the error record',
    async (path) => {
      await start();
      const method = path.includes('touch') ? 'POST' : path.includes('retrieve') ? 'GET' : 'DELETE';
      const r = await rawExchange(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ error: 'malformed percent-encoding in the path', code: 'INVALID_REQUEST' });
    },
  );

  it('answers protocol errors (bad request line, headers over 16 KB) with the error record', async () => {
    await start();
    const bad = await rawExchange(port, 'HELLO\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ error: 'malformed HTTP request', code: 'INVALID_REQUEST' });
    const big = await rawExchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ error: 'request headers too large', code: 'HEADERS_TOO_LARGE' });
  });

  // docs/storage.md, "Errors": a compressed body is not read: 415 with the error record, in the OpenAPI document too.
  it.each(['/storage/store', '/storage/touch/' + 'ab'.repeat(32)])(
    'answers a body sent with a Content-Encoding on %s with 415',
    async (path) => {
      await start();
      const body = '{}';
      const r = await rawExchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nAuthorization: Bearer ${'cd'.repeat(32)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      expect(r.status).toBe(415);
      expect(JSON.parse(r.body)).toEqual({
        error: 'unsupported media type',
        code: 'UNSUPPORTED_MEDIA_TYPE',
        details: 'content-encoding gzip is not accepted',
      });
    },
  );
});
