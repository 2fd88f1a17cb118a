import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHpkeSuite, nobleBackend, nodeBackend, nodeX25519, openFromBase64 } from '@repo/crypto';
import { createSilentLogger } from '@repo/service';
import { createFileStore } from '../src/file-store';
import { createVersionStore } from '../src/versions';
import { createWatchHub } from '../src/watch';
import { recipientInfo } from '../src/recipient';
import { get, registerClientKey, startServer, type Harness, type Reply } from './support/harness';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.close();
});

const open = (text: string, key: Uint8Array) => new TextDecoder().decode(openFromBase64(key, text, { backend: nobleBackend }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a waiting request; resolves with the reply and when it arrived. */
function waitFor(harness: Harness, path: string, tag: string): Promise<Reply & { at: number }> {
  return get(harness, path, { 'If-None-Match': tag }).then((reply) => ({ ...reply, at: Date.now() }));
}

/** Resolves once `n` requests are waiting on the server. */
async function waiting(harness: Harness, n: number): Promise<void> {
  while (harness.service.watch.stats.waiting < n) await sleep(10);
}

describe('?wait=', () => {
  it('answers a waiting client as soon as the file changes, long before the wait ends', async () => {
    const first = await get(h, '/dev/plain.txt');
    const pending = waitFor(h, '/dev/plain.txt?wait=20', first.headers.etag as string);
    await waiting(h, 1);
    await sleep(200); // the client is parked: nothing has answered it
    const changedAt = Date.now();
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'changed while waiting\n');
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.at).toBeGreaterThanOrEqual(changedAt);
    // 200, not the 304 of a wait that ran out: the change ended it.
    expect(reply.headers['x-config-version']).not.toBe(first.headers['x-config-version']);
    expect(open(reply.text, h.derivedKey('dev'))).toBe('changed while waiting\n');
  });

  it('answers when a .env value the file uses changes (and not for an unrelated one)', async () => {
    const first = await get(h, '/dev/sub/dir/nested.txt');
    const pending = waitFor(h, '/dev/sub/dir/nested.txt?wait=20', first.headers.etag as string);
    await waiting(h, 1);
    const envFile = join(h.storageDir, 'dev', '.env');
    writeFileSync(envFile, 'HOST=db\nPORT=5432\nUNRELATED=1\n');
    await sleep(800); // an unrelated change renders the file, finds its version unchanged, keeps waiting
    expect(h.service.watch.stats.waiting).toBe(1);
    const changedAt = Date.now();
    writeFileSync(envFile, 'HOST=db-new\nPORT=5432\nUNRELATED=1\n');
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.at).toBeGreaterThanOrEqual(changedAt);
    expect(open(reply.text, h.derivedKey('dev'))).toBe('nested db-new\n');
  });

  it('sees a file replaced by rename, as editors and deploy tools do', async () => {
    const first = await get(h, '/dev/plain.txt');
    const pending = waitFor(h, '/dev/plain.txt?wait=20', first.headers.etag as string);
    await waiting(h, 1);
    const tmp = join(h.storageDir, 'dev', '.plain.txt.tmp');
    writeFileSync(tmp, 'replaced\n');
    renameSync(tmp, join(h.storageDir, 'dev', 'plain.txt'));
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(open(reply.text, h.derivedKey('dev'))).toBe('replaced\n');
  });

  it('answers 304 when the wait ends without a change, not 408, even at the request timeout', async () => {
    const short = await startServer({ REQUEST_TIMEOUT_MS: '1000' });
    try {
      const first = await get(short, '/dev/plain.txt');
      const started = Date.now();
      const reply = await waitFor(short, '/dev/plain.txt?wait=1', first.headers.etag as string);
      expect(reply.status).toBe(304);
      expect(reply.text).toBe('');
      expect(reply.at - started).toBeGreaterThanOrEqual(950);
      expect(reply.headers.etag).toBe(first.headers.etag);
    } finally {
      await short.close();
    }
  });

  it('answers at once when the client holds an older version, or no If-None-Match', async () => {
    const pending = waitFor(h, '/dev/plain.txt?wait=20', '"AAAAAAAAAAAAAAAAAAAAAA"');
    expect((await pending).status).toBe(200);
    expect((await get(h, '/dev/plain.txt?wait=20')).status).toBe(200);
  });

  it('shares one watcher among every client waiting on a file', async () => {
    const first = await get(h, '/dev/plain.txt');
    const tag = first.headers.etag as string;
    const other = await get(h, '/prod/app.conf');
    const pending = [1, 2, 3, 4, 5].map(() => waitFor(h, '/dev/plain.txt?wait=20', tag));
    pending.push(waitFor(h, '/prod/app.conf?wait=20', other.headers.etag as string));
    await waiting(h, 6);
    expect(h.service.watch.stats).toEqual({ files: 2, waiting: 6 });
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'for everyone\n');
    const replies = await Promise.all(pending.slice(0, 5));
    for (const reply of replies) expect(open(reply.text, h.derivedKey('dev'))).toBe('for everyone\n');
    expect(h.service.watch.stats).toEqual({ files: 1, waiting: 1 }); // prod is still waited on
    writeFileSync(join(h.storageDir, 'prod', 'app.conf'), 'url=changed\n');
    expect((await pending[5]!).status).toBe(200);
    expect(h.service.watch.stats).toEqual({ files: 0, waiting: 0 });
  });

  it('seals the new version to a waiting client key, unless the key was revoked meanwhile', async () => {
    const suite = createHpkeSuite('X25519', { x25519: nodeX25519, aead: nodeBackend });
    const pair = suite.kem.generateKeyPair();
    const pub = registerClientKey(h, 'dev', 'agent', pair.publicKey);
    const headers = { 'X-Client-Kem': 'X25519', 'X-Client-Public-Key': Buffer.from(pair.publicKey).toString('base64') };
    const first = await get(h, '/dev/plain.txt', headers);
    const wait = () => get(h, '/dev/plain.txt?wait=20', { ...headers, 'If-None-Match': first.headers.etag as string });
    const kept = wait();
    await waiting(h, 1);
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'for the agent\n');
    const reply = await kept;
    expect(reply.status).toBe(200);
    const plain = suite.openBytes(pair.privateKey, Buffer.from(reply.text, 'base64'), { info: recipientInfo('dev', 'plain.txt') });
    expect(Buffer.from(plain).toString()).toBe('for the agent\n');

    const revoked = get(h, '/dev/plain.txt?wait=20', { ...headers, 'If-None-Match': reply.headers.etag as string });
    await waiting(h, 1);
    rmSync(pub);
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'not for the agent\n');
    expect((await revoked).status).toBe(403);
  });

  it('answers 404 to a client waiting on a file that is deleted', async () => {
    const first = await get(h, '/dev/plain.txt');
    const pending = waitFor(h, '/dev/plain.txt?wait=20', first.headers.etag as string);
    await waiting(h, 1);
    rmSync(join(h.storageDir, 'dev', 'plain.txt'));
    const reply = await pending;
    expect(reply.status).toBe(404);
    expect(reply.json()).toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('releases a client that goes away', async () => {
    const first = await get(h, '/dev/plain.txt');
    const { request } = await import('node:https');
    const req = request({
      host: '127.0.0.1',
      port: h.port,
      path: '/dev/plain.txt?wait=20',
      headers: { 'If-None-Match': first.headers.etag as string },
      ca: h.ca,
      servername: 'localhost',
      agent: false,
    });
    req.on('error', () => undefined);
    req.end();
    await waiting(h, 1);
    req.destroy();
    while (h.service.watch.stats.waiting > 0) await sleep(10);
    expect(h.service.watch.stats).toEqual({ files: 0, waiting: 0 });
  });

  it('does not hold the wait of a client that went away before its request was parked', async () => {
    const first = await get(h, '/dev/plain.txt');
    let received = 0;
    h.service.servers.https.on('request', () => received++);
    const { connect } = await import('node:tls');
    // Each client sends its request and hangs up at once: gone while the file is still being rendered.
    const gone = Array.from(
      { length: 10 },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: h.port, ca: h.ca, servername: 'localhost' }, () => {
            socket.write(`GET /dev/plain.txt?wait=20 HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${first.headers.etag as string}\r\n\r\n`);
            socket.destroy();
            resolve();
          });
          socket.on('error', reject);
        }),
    );
    await Promise.all(gone);
    // Once every connection is gone no request can still arrive; each one received wrote its line
    // (status 0: the client went away); none is left waiting for a client that is gone.
    while (h.service.connections.count('127.0.0.1') > 0) await sleep(20);
    while (h.logs.filter((l) => l.msg === 'request' && l.path === '/dev/plain.txt' && l.status === 0).length < received) await sleep(20);
    expect(h.service.watch.stats).toEqual({ files: 0, waiting: 0 });
  });

  it('answers every waiting client 304 on close(), and close() does not wait for their wait to end', async () => {
    const first = await get(h, '/dev/plain.txt');
    const pending = [
      waitFor(h, '/dev/plain.txt?wait=25', first.headers.etag as string),
      waitFor(h, '/dev/plain.txt?wait=25', first.headers.etag as string),
    ];
    await waiting(h, 2);
    const started = Date.now();
    await h.close();
    const replies = await Promise.all(pending);
    expect(Date.now() - started).toBeLessThan(20_000); // their waits were 25 s

    for (const reply of replies) {
      expect(reply.status).toBe(304);
      expect(reply.headers.connection).toBe('close');
    }
  });

  it('holds no in-flight slot while waiting (MAX_IN_FLIGHT), and MAX_WAITING bounds the waits', async () => {
    const tight = await startServer({ MAX_IN_FLIGHT: '1', MAX_WAITING: '2' });
    try {
      const tag = (await get(tight, '/dev/plain.txt')).headers.etag as string;
      const pending = [waitFor(tight, '/dev/plain.txt?wait=20', tag), waitFor(tight, '/dev/plain.txt?wait=20', tag)];
      await waiting(tight, 2);
      expect((await get(tight, '/dev/plain.txt')).status).toBe(200);
      const third = await get(tight, '/dev/plain.txt?wait=20', { 'If-None-Match': tag });
      expect(third.status).toBe(503);
      expect(third.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: 'too many waiting requests' });
      writeFileSync(join(tight.storageDir, 'dev', 'plain.txt'), 'x\n');
      for (const reply of await Promise.all(pending)) expect(reply.status).toBe(200);
    } finally {
      await tight.close();
    }
  });

  it.each([
    ['-1', 'negative'],
    ['abc', 'not a number'],
    ['31', 'over the request timeout (30 s)'],
    ['1e3', 'exponent'],
    ['0.0001', 'too precise'],
  ])('answers 400 for wait=%s (%s)', async (value) => {
    const res = await get(h, `/dev/plain.txt?wait=${value}`);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid parameter: wait',
      code: 'INVALID_PARAMETER',
      details: 'seconds, 0 to 30 (at most 3 decimals)',
    });
  });

  it('answers 400 for wait together with version', async () => {
    const v = (await get(h, '/dev/plain.txt')).headers['x-config-version'] as string;
    const res = await get(h, `/dev/plain.txt?wait=5&version=${v}`);
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_PARAMETER', error: 'invalid parameter: wait' });
  });

  it('answers 404 at once for a file that does not exist, without waiting', async () => {
    const reply = await waitFor(h, '/dev/nothing.txt?wait=20', '"AAAAAAAAAAAAAAAAAAAAAA"');
    expect(reply.status).toBe(404);
    expect(h.service.watch.stats).toEqual({ files: 0, waiting: 0 });
  });
});

describe('the watch hub without file system events', () => {
  it('notices a change by its poll alone', async () => {
    const logger = createSilentLogger();
    const store = createFileStore({ storageDir: h.storageDir, maxFileBytes: 1 << 20, cacheMs: 0, logger });
    const versions = createVersionStore({ secret: new Uint8Array(32).fill(7), dir: join(h.dataDir, 'h2'), maxPerFile: 5, logger });
    const hub = createWatchHub({
      storageDir: h.storageDir,
      render: async (request) => {
        const file = await store.render(request);
        return { file, version: versions.versionOf(request.env, request.file, file.content) };
      },
      pollMs: 100,
      maxWaiting: 10,
      logger,
      fsEvents: false,
    });
    const request = { env: 'dev', file: 'plain.txt' };
    const known = versions.versionOf('dev', 'plain.txt', (await store.render(request)).content);
    const outcome = hub.waitForChange(request, known, 20_000, new AbortController().signal);
    await sleep(300);
    expect(hub.stats.waiting).toBe(1);
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'seen by the poll\n');
    const result = await outcome;
    expect(result.kind).toBe('changed');
    if (result.kind === 'changed') expect(result.file.file.content.toString()).toBe('seen by the poll\n');
    hub.close();
  });
});
