import { mkfifoSync } from './support/fifo';
import { closeSync, existsSync, openSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { get, openTls, startServer, type Harness } from './support/harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('file size limit', () => {
  it('answers 500 with a clear message for a file over MAX_FILE_BYTES', async () => {
    h = await startServer({ MAX_FILE_BYTES: '1000' });
    writeFileSync(join(h.storageDir, 'dev', 'big.txt'), 'x'.repeat(1001));
    writeFileSync(join(h.storageDir, 'dev', 'ok.txt'), 'x'.repeat(1000));
    const res = await get(h, '/dev/big.txt');
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'file too large', code: 'INTERNAL_ERROR', details: 'files are limited to 1000 bytes' });
    expect((await get(h, '/dev/ok.txt')).status).toBe(200);
  });

  it('answers 500 when substitution would grow the file past the limit', async () => {
    h = await startServer({ MAX_FILE_BYTES: '2000' });
    writeFileSync(join(h.storageDir, 'dev', '.env'), `BIG=${'y'.repeat(500)}\n`);
    writeFileSync(join(h.storageDir, 'dev', 'grow.txt'), '${BIG}'.repeat(10));
    const res = await get(h, '/dev/grow.txt');
    expect(res.status).toBe(500);
    expect(res.json()).toMatchObject({ error: 'variable processing error', code: 'INTERNAL_ERROR' });
  });
});

describe('request size limit', () => {
  it('answers 413 for a request over MAX_REQUEST_BYTES', async () => {
    h = await startServer({ MAX_REQUEST_BYTES: '1024' });
    const res = await get(h, '/health', { 'Content-Type': 'application/json' }, 'POST', Buffer.alloc(2048, 0x20));
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('request timeout', () => {
  it('answers 408 REQUEST_TIMEOUT when processing takes longer than REQUEST_TIMEOUT_MS', async () => {
    h = await startServer({ REQUEST_TIMEOUT_MS: '300' });
    // A disk that does not answer: every thread of libuv's pool (which the server's file reads
    // use) is held by a blocking open of a FIFO, made here, outside the server (the server itself
    // opens without blocking: a FIFO in storage is a 404).
    const pool = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const fifos = Array.from({ length: pool }, (_, i) => join(h!.storageDir, `stuck${i}`));
    fifos.forEach(mkfifoSync);
    const held = fifos.map((fifo) => open(fifo, 'r'));
    try {
      const res = await get(h, '/dev/plain.txt');
      expect(res.status).toBe(408);
      expect(res.json()).toEqual({ error: 'request timeout', code: 'REQUEST_TIMEOUT' });
    } finally {
      for (const fifo of fifos) closeSync(openSync(fifo, 'w')); // release the blocked opens
      for (const handle of await Promise.all(held)) await handle.close();
      fifos.forEach(unlinkSync);
    }
    // The handler answered 408 goes on once the disk answers: whatever it writes to the version
    // history is written before close() resolves, or not at all (it once wrote afterwards).
    await h.service.close();
    const history = join(h.dataDir, 'history');
    const kept = () => (existsSync(history) ? readdirSync(history, { recursive: true }).map(String).sort() : []);
    const atClose = kept();
    await new Promise((r) => setTimeout(r, 300));
    expect(kept()).toEqual(atClose);
  });
});

describe('rate limits', () => {
  it('puts X-RateLimit headers on every response and answers 429 past the burst', async () => {
    h = await startServer({ RATE_LIMIT_PER_SECOND: '3', RATE_LIMIT_PER_MINUTE: '100' });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await get(h, '/health');
      statuses.push(last.status);
      expect(last.headers['x-ratelimit-limit']).toBe('100');
      expect(last.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    if (last === undefined) throw new Error('no request was made');
    expect(last.json()).toMatchObject({ error: 'rate limit exceeded', code: 'RATE_LIMITED' });
    expect(last.headers['retry-after']).toBe('1');
    expect(last.headers['x-ratelimit-retry-after']).toBe('1');
  });

  it('allows an address 10 requests a second and 100 a minute when nothing is set (RATE_LIMIT_PER_SECOND, RATE_LIMIT_PER_MINUTE)', async () => {
    let t = 1_000_000;
    h = await startServer({ RATE_LIMIT_PER_SECOND: undefined, RATE_LIMIT_PER_MINUTE: undefined }, { now: () => t });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await get(h, '/health')).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]); // the refused one is not counted
    for (let second = 1; second < 10; second++) {
      t += 1_000;
      for (let i = 0; i < 10; i++) expect((await get(h, '/health')).status).toBe(200);
    }
    t += 1_000; // a new second, the minute's 100 spent
    const limited = await get(h, '/health');
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-limit']).toBe('100');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('answers 429 past the minute allowance with the time to its reset', async () => {
    let t = 1_000_000;
    h = await startServer({ RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_PER_MINUTE: '5' }, { now: () => t });
    for (let i = 0; i < 5; i++) {
      const res = await get(h, '/health');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(4 - i));
      t += 1_000;
    }
    const limited = await get(h, '/health');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('55');
    t += 55_000;
    expect((await get(h, '/health')).status).toBe(200);
  });
});

describe('connections per address', () => {
  it('refuses a connection past MAX_CONNECTIONS_PER_IP', async () => {
    h = await startServer({ MAX_CONNECTIONS_PER_IP: '2' });
    const a = await openTls(h);
    const b = await openTls(h);
    await expect(openTls(h)).rejects.toThrow();
    a.destroy();
    b.destroy();
    while (h.service.connections.count('127.0.0.1') > 0) await new Promise((r) => setTimeout(r, 10));
    expect((await get(h, '/health')).status).toBe(200);
    expect(h.service.connections.refused).toBe(1);
  });
});

describe('maintenance', () => {
  it('answers 503 while the MAINTENANCE flag file exists', async () => {
    let t = 0;
    h = await startServer({}, { now: () => t });
    writeFileSync(join(h.dataDir, 'MAINTENANCE'), '');
    t += 1_000;
    const res = await get(h, '/dev/plain.txt');
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'service temporarily unavailable', code: 'SERVICE_UNAVAILABLE', details: 'maintenance' });
    unlinkSync(join(h.dataDir, 'MAINTENANCE'));
    t += 1_000;
    expect((await get(h, '/dev/plain.txt')).status).toBe(200);
  });

  it('answers 503 everywhere with MAINTENANCE_MODE=true', async () => {
    h = await startServer({ MAINTENANCE_MODE: 'true' });
    expect((await get(h, '/health')).status).toBe(503);
  });
});
