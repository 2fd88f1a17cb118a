import WebSocket from 'ws';
import type { Socket } from 'node:net';
import { holdSlowConnections, rawExchange } from '@repo/http/testing';
import { removeTempDirs, startRelay, waitFor, type TestRelay } from './support/helpers';

// docs/relay.md, "HTTP limits" and "WebSocket limits": one address cannot take every slot.
describe('relay: one address cannot lock others out; malformed requests get the error record', () => {
  let relay: TestRelay;
  const held: Socket[] = [];
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    for (const ws of sockets.splice(0)) ws.terminate();
    await relay.close();
    removeTempDirs();
  });

  const port = (url: string) => Number(new URL(url).port);
  const openWs = (url: string, localAddress: string) =>
    new Promise<WebSocket | undefined>((resolve) => {
      const ws = new WebSocket(url, { localAddress });
      ws.once('open', () => {
        sockets.push(ws);
        resolve(ws);
      });
      ws.once('error', () => resolve(undefined));
      ws.once('close', () => resolve(undefined));
    });

  it('HTTP API: an address holding its cap with slow bodies leaves another address answered at once', async () => {
    relay = await startRelay({ MAX_HTTP_CONNECTIONS: '12', MAX_HTTP_CONNECTIONS_PER_IP: '5' });
    const httpPort = port(relay.httpUrl);
    held.push(...(await holdSlowConnections(httpPort, 12, '127.0.0.2', '/sync', 100)));
    // On a busy machine the server may close the excess connections after the client's settle time.
    await waitFor(() => held.filter((s) => !s.destroyed).length <= 5, 5_000, 'the excess connections closed');
    expect(held.filter((s) => !s.destroyed).length).toBeGreaterThan(0);
    const r = await rawExchange(httpPort, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', { localAddress: '127.0.0.3', timeoutMs: 2_000 });
    expect(r.status).toBe(200);
  });

  it('WebSocket: an address at its cap leaves another address connected', async () => {
    relay = await startRelay({ MAX_WS_CONNECTIONS: '10', MAX_WS_CONNECTIONS_PER_IP: '4' });
    const opened = await Promise.all(Array.from({ length: 10 }, () => openWs(relay.wsUrl, '127.0.0.2')));
    expect(opened.filter((w) => w !== undefined).length).toBe(4);
    expect(await openWs(relay.wsUrl, '127.0.0.3')).toBeDefined();
  });

  // docs/relay.md, "WebSocket limits": MAX_WS_CONNECTIONS simultaneous connections, the last tenth
  // for addresses with none open, and past it a 503 before the handshake (the TCP guard's own
  // reserve must not cut the pool below the limit).
  it('WebSocket: two addresses fill MAX_WS_CONNECTIONS but its last tenth, new addresses the rest, and the next upgrades get 503', async () => {
    relay = await startRelay({ MAX_WS_CONNECTIONS: '100', MAX_WS_CONNECTIONS_PER_IP: '60' });
    const statuses: (number | 'open' | 'closed')[] = [];
    const attempt = (localAddress: string) =>
      new Promise<void>((resolve) => {
        const ws = new WebSocket(relay.wsUrl, { localAddress });
        ws.once('open', () => {
          sockets.push(ws);
          statuses.push('open');
          resolve();
        });
        ws.once('unexpected-response', (_req, res) => {
          res.resume();
          statuses.push(res.statusCode ?? 0);
          resolve();
        });
        ws.once('error', () => {
          statuses.push('closed');
          resolve();
        });
      });
    await Promise.all(Array.from({ length: 60 }, () => attempt('127.0.0.2')));
    await Promise.all(Array.from({ length: 60 }, () => attempt('127.0.0.3')));
    expect(statuses.filter((s) => s === 'open')).toHaveLength(90);
    for (let i = 0; i < 12; i++) await attempt(`127.0.1.${i + 1}`);
    expect(statuses.filter((s) => s === 'open')).toHaveLength(100);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
  });

  it('refuses an announced body over the limit at once with 413', async () => {
    relay = await startRelay({ MAX_BODY_BYTES: '2048' });
    const r = await rawExchange(
      port(relay.httpUrl),
      'POST /sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n',
      { timeoutMs: 3_000 },
    );
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('answers a malformed request line and headers over 16 KB with the nested error record', async () => {
    relay = await startRelay();
    const bad = await rawExchange(port(relay.httpUrl), 'NOT HTTP\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ error: { code: 'INVALID_REQUEST', message: 'malformed HTTP request' } });
    const big = await rawExchange(port(relay.wsUrl), `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ error: { code: 'HEADERS_TOO_LARGE', message: 'request headers too large' } });
  });

  it('refuses JSON nested past the bound with 400', async () => {
    relay = await startRelay();
    const text = '['.repeat(5_000);
    const r = await rawExchange(
      port(relay.httpUrl),
      `POST /sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n${text}`,
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'INVALID_REQUEST', message: 'JSON body nested too deep' } });
  });
});
