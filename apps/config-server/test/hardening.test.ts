import { symlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { openConnection, rawExchange } from '@repo/http/testing';
import { get, startServer, tlsExchange, type Harness } from './support/harness';
import { TLS12_CBC_ONLY, tlsHandshake } from './support/tls-handshake';

let h: Harness;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await h.close();
});

// docs/config-server.md, "Path rules": what is served lives inside the real storage root.
describe('symlinks', () => {
  it('refuses an environment directory that is a symlink to a folder outside the storage root', async () => {
    h = await startServer();
    // storage/outside -> the folder holding storage/ and secret.txt
    symlinkSync(join(h.storageDir, '..'), join(h.storageDir, 'outside'));
    const res = await get(h, '/outside/secret.txt');
    expect(res.status).toBe(403);
    expect(res.json()).toEqual({ error: 'access not authorized', code: 'ACCESS_DENIED' });
  });

  it("applies the dotfile rule to the resolved name: a link to the environment's .env is not found", async () => {
    h = await startServer();
    symlinkSync(join(h.storageDir, 'dev', '.env'), join(h.storageDir, 'dev', 'envlink.txt'));
    const res = await get(h, '/dev/envlink.txt');
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ error: 'file not found: dev/envlink.txt', code: 'FILE_NOT_FOUND' });
  });

  it('still serves an environment that is a symlink to another environment inside the root', async () => {
    h = await startServer();
    symlinkSync(join(h.storageDir, 'dev'), join(h.storageDir, 'devalias'));
    expect((await get(h, '/devalias/plain.txt')).status).toBe(200);
  });
});

describe('TLS policy', () => {
  it('refuses a TLS 1.2 client offering only CBC-SHA suites, accepts AEAD suites and TLS 1.3', async () => {
    h = await startServer();
    expect((await tlsHandshake(h.port, TLS12_CBC_ONLY)).ok).toBe(false);
    expect(await tlsHandshake(h.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' })).toMatchObject({
      ok: true,
      protocol: 'TLSv1.2',
    });
    expect(await tlsHandshake(h.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-CHACHA20-POLY1305' })).toMatchObject({ ok: true });
    expect(await tlsHandshake(h.port, {})).toMatchObject({ ok: true, protocol: 'TLSv1.3' });
  });
});

describe('connection caps', () => {
  it('caps connections in all (MAX_CONNECTIONS), keeps a slot for a new address, and one address at its cap leaves others answered', async () => {
    h = await startServer({ MAX_CONNECTIONS: '10', MAX_CONNECTIONS_PER_IP: '4' });
    // Idle TCP connections that never start TLS: 4 from each address at most. Counted once the
    // server has kept or refused every one of them (however long a busy machine takes).
    const kept = async (from: string, n: number) => {
      const { connections } = h.service;
      const refusedBefore = connections.refused;
      for (const o of await Promise.all(Array.from({ length: n }, () => openConnection(h.port, 0, from)))) sockets.push(o.socket);
      while (connections.count(from) + connections.refused - refusedBefore < n) await new Promise((r) => setTimeout(r, 10));
      return connections.count(from);
    };
    expect(await kept('127.0.0.2', 6)).toBe(4);
    expect(await kept('127.0.0.3', 6)).toBe(4);
    // 8 of 10 open, 9 shared: a third address gets one, not two.
    expect(await kept('127.0.0.4', 2)).toBe(1);
    // The reserved slot: a new address is still served.
    const res = await get(h, '/dev/plain.txt');
    expect(res.status).toBe(200);
  });

  it('drops a connection that never finishes the TLS handshake after HEADERS_TIMEOUT_MS', async () => {
    h = await startServer({ HEADERS_TIMEOUT_MS: '300' });
    const o = await openConnection(h.port, 50);
    sockets.push(o.socket);
    // Node's own handshake deadline is 120 s, past this test's timeout: a close here is HEADERS_TIMEOUT_MS's.
    await new Promise<void>((resolve) => o.socket.once('close', () => resolve()));
  });

  it('answers a plain-HTTP request on the TLS port 400 in plain HTTP, logs it, serves nothing, and keeps serving', async () => {
    h = await startServer();
    const r = await rawExchange(h.port, 'GET /dev/plain.txt HTTP/1.1\r\nHost: x\r\n\r\n', { timeoutMs: 20_000 });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({
      error: 'plain HTTP sent to a TLS port: connect with https:// or wss://',
      code: 'INVALID_REQUEST',
    });
    expect(h.logs).toContainEqual(
      expect.objectContaining({
        msg: 'protocol error answered: plain HTTP sent to a TLS port: connect with https:// or wss://',
        status: 400,
      }),
    );
    expect((await get(h, '/dev/plain.txt')).status).toBe(200);
  });
});

// docs/config-server.md, "Response headers" (on every response, errors included) and "Errors"
// (protocol errors get the error record).
describe('requests Node itself would refuse bare', () => {
  it('answers an HTTP/1.1 request without Host 400 INVALID_REQUEST with the error record and the common headers, then closes', async () => {
    h = await startServer();
    for (const path of ['/dev/plain.txt', '/health']) {
      const r = await tlsExchange(h, `GET ${path} HTTP/1.1\r\nUser-Agent: t\r\n\r\n`);
      expect(r.status).toBe(400);
      expect(r.head).toContain('\r\nAPI-Version: 1.0.0');
      expect(r.head).toContain('\r\nX-Encryption-Type: quantum-resistant');
      expect(r.head).toMatch(/\r\nConnection: close/i);
      expect(JSON.parse(r.body)).toEqual({
        error: 'malformed HTTP request',
        code: 'INVALID_REQUEST',
        details: 'an HTTP/1.1 request needs a Host header',
      });
    }
    expect(h.logs).toContainEqual(expect.objectContaining({ msg: 'protocol error answered: malformed HTTP request', status: 400 }));
    // HTTP/1.0 has no Host requirement: served.
    expect((await tlsExchange(h, 'GET /health HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('answers protocol errors (a malformed request line, headers too large) with the error record and the common headers', async () => {
    h = await startServer();
    const cases: [string, number, string][] = [
      ['GET /dev/plain.txt HTTP/1.1 extra\r\nHost: localhost\r\n\r\n', 400, 'malformed HTTP request'],
      [`GET /dev/plain.txt HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request headers too large'],
    ];
    for (const [request, status, error] of cases) {
      const r = await tlsExchange(h, request);
      expect(r.status).toBe(status);
      expect(r.head).toContain('\r\nAPI-Version: 1.0.0');
      expect(r.head).toContain('\r\nX-Encryption-Type: quantum-resistant');
      expect(JSON.parse(r.body)).toMatchObject({ error });
    }
  });

  it('serves a request with an Expect other than 100-continue as usual, not a bare 417', async () => {
    h = await startServer();
    const r = await tlsExchange(h, 'GET /dev/plain.txt HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\nConnection: close\r\n\r\n');
    expect(r.status).toBe(200);
    expect(r.head).toContain('\r\nX-Encryption-Mode: psk');
    const missing = await tlsExchange(h, 'GET /dev/missing.txt HTTP/1.1\r\nHost: localhost\r\nExpect: x\r\nConnection: close\r\n\r\n');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ error: 'file not found: dev/missing.txt', code: 'FILE_NOT_FOUND' });
  });
});
