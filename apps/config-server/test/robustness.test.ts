import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { nobleBackend, openFromBase64 } from '@repo/crypto';
import { generateSelfSignedCertificate } from '@repo/service';
import { temporaryFolders } from '@repo/service/testing';
import { openConnection } from '@repo/http/testing';
import { mkfifoSync } from './support/fifo';
import { get, startServer, type Harness } from './support/harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
const folder = temporaryFolders();

/** Lets a reader blocked on opening `fifo` go (a writer appears and leaves); nothing when nobody reads it. */
function releaseFifo(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // ENXIO: no reader is waiting on it
  }
}

describe('special files in the storage tree', () => {
  it('answers 404 for named pipes, and a handful of them does not stall the reads of every other file', async () => {
    h = await startServer({ REQUEST_TIMEOUT_MS: '1500' });
    // One pipe per thread of libuv's pool: a blocking open on each would hold them all.
    const pool = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const fifos = Array.from({ length: pool }, (_, i) => join(h!.storageDir, 'dev', `pipe${i}.txt`));
    fifos.forEach(mkfifoSync);
    try {
      const answers = await Promise.all(fifos.map((_, i) => get(h!, `/dev/pipe${i}.txt`)));
      expect(answers.map((a) => a.status)).toEqual(fifos.map(() => 404));
      expect(answers[0]!.json()).toEqual({ error: 'file not found: dev/pipe0.txt', code: 'FILE_NOT_FOUND' });
      const [plain, health] = await Promise.all([get(h, '/dev/plain.txt'), get(h, '/health')]);
      expect(plain.status).toBe(200);
      expect(health.status).toBe(200);
    } finally {
      fifos.forEach(releaseFifo);
    }
  });

  it("answers 500 for a file needing substitution when the environment's .env is a named pipe, at once", async () => {
    h = await startServer({ REQUEST_TIMEOUT_MS: '1500' });
    const envFile = join(h.storageDir, 'prod', '.env');
    spawnSync('rm', [envFile]);
    mkfifoSync(envFile);
    try {
      const res = await get(h, '/prod/app.conf');
      expect(res.status).toBe(500);
      expect(res.json()).toEqual({ error: 'internal server error', code: 'INTERNAL_ERROR' });
    } finally {
      releaseFifo(envFile);
    }
  });
});

describe('.env resolution limits', () => {
  it('refuses a short .env whose values, resolved, would take far more memory than its files may hold', async () => {
    h = await startServer({ MAX_FILE_BYTES: '100000' });
    // 3 KB of .env; each V<i> is 100 KB once resolved (under the 1 MiB cap per value), 1 MB in all.
    const lines = [`B=${'x'.repeat(1000)}`, `C=${'$B'.repeat(100)}`, ...Array.from({ length: 10 }, (_, i) => `V${i}=a$C`)];
    writeFileSync(join(h.storageDir, 'dev', '.env'), `${lines.join('\n')}\nHOST=db\n`);
    const res = await get(h, '/dev/app.conf');
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({
      error: 'variable processing error',
      code: 'INTERNAL_ERROR',
      details: 'the .env values, resolved, exceed 400000 characters',
    });
    expect(h.logs.some((l) => l.msg === '.env refused: its values, resolved, would exceed the limit' && l.env === 'dev')).toBe(true);
    // Files without placeholders do not need the .env.
    expect((await get(h, '/dev/plain.txt')).status).toBe(200);
  });

  it('resolves a .env with a chain of 30,000 references like any other: the placeholder stays, one line says why', async () => {
    h = await startServer();
    const lines = Array.from({ length: 30_000 }, (_, i) => `A${i}=$A${i + 1}`);
    writeFileSync(join(h.storageDir, 'dev', '.env'), `${lines.join('\n')}\nA30000=end\n`);
    writeFileSync(join(h.storageDir, 'dev', 'chain.txt'), 'a=${A0} b=${A29995}\n');
    const res = await get(h, '/dev/chain.txt');
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(openFromBase64(h.derivedKey('dev'), res.text, { backend: nobleBackend }))).toBe('a=${A0} b=end\n');
    const unresolved = h.logs.filter((l) => l.env === 'dev' && String(l.msg).startsWith('variable not resolved'));
    expect(unresolved).toEqual([expect.objectContaining({ msg: 'variable not resolved: depth', variable: 'A29990' })]);
  });

  it('logs the first 20 unresolved variables of a .env, then how many more', async () => {
    h = await startServer();
    const lines = Array.from({ length: 1_000 }, (_, i) => `C${i}=$C${(i + 1) % 1_000}`);
    writeFileSync(join(h.storageDir, 'dev', '.env'), `${lines.join('\n')}\n`);
    expect((await get(h, '/dev/app.conf')).status).toBe(200);
    const cycles = h.logs.filter((l) => l.msg === 'variable not resolved: cycle');
    expect(cycles).toHaveLength(20);
    expect((cycles[0]!.path as string[]).length).toBe(12);
    expect(h.logs.find((l) => l.msg === 'more variables not resolved (not logged one by one)')).toMatchObject({ env: 'dev', more: 980 });
  });

  it('logs an unresolved variable as `variable`, leaving the logger its own `name`', async () => {
    h = await startServer();
    expect((await get(h, '/dev/app.conf')).status).toBe(200);
    const cycle = h.logs.find((l) => l.msg === 'variable not resolved: cycle');
    expect(cycle).toMatchObject({ name: 'test', env: 'dev', variable: 'A', path: ['A', 'B', 'A'] });
  });
});

describe('configuration at start', () => {
  const MAIN = join(__dirname, '..', 'dist', 'main.js');
  const run = (env: Record<string, string>) => {
    const root = folder('config-server-start');
    const res = spawnSync(process.execPath, [MAIN], {
      encoding: 'utf8',
      timeout: 20_000,
      killSignal: 'SIGKILL',
      env: { PATH: process.env.PATH ?? '', DATA_DIR: join(root, 'data'), STORAGE_DIR: join(root, 'storage'), PORT: '0', ...env },
    });
    return { status: res.status, output: `${res.stdout}${res.stderr}`, root };
  };

  it('names TLS_CERT_FILE or TLS_KEY_FILE when the operator pair does not load', async () => {
    const dir = folder('config-server-tls');
    const a = await generateSelfSignedCertificate(['localhost']);
    const b = await generateSelfSignedCertificate(['localhost']);
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const garbage = file('garbage.pem', 'not a pem file\n');
    const cert = file('cert.pem', a.cert);
    const key = file('key.pem', a.key);
    const otherKey = file('other-key.pem', b.key);

    const badCert = run({ TLS_CERT_FILE: garbage, TLS_KEY_FILE: key });
    expect(badCert.status).toBe(1);
    expect(badCert.output).toContain(`configuration error: TLS_CERT_FILE (${garbage}) does not hold a PEM certificate`);
    const badKey = run({ TLS_CERT_FILE: cert, TLS_KEY_FILE: garbage });
    expect(badKey.status).toBe(1);
    expect(badKey.output).toContain(`configuration error: TLS_KEY_FILE (${garbage}) does not hold a PEM private key`);
    const mismatch = run({ TLS_CERT_FILE: cert, TLS_KEY_FILE: otherKey });
    expect(mismatch.status).toBe(1);
    expect(mismatch.output).toContain('configuration error: TLS_CERT_FILE and TLS_KEY_FILE do not make a certificate and its key');
    for (const res of [badCert, badKey, mismatch]) expect(res.output).not.toMatch(/\n\s+at /);
  });
});

describe('connections', () => {
  it('closes a connection that never finishes the TLS handshake at HEADERS_TIMEOUT_MS, not later', async () => {
    h = await startServer({ HEADERS_TIMEOUT_MS: '300' });
    const o = await openConnection(h.port, 50);
    o.socket.write(Buffer.from('16030100', 'hex')); // the start of a ClientHello, never finished
    // Node's own handshake deadline is 120 s, past this test's timeout: a close here is HEADERS_TIMEOUT_MS's.
    await new Promise<void>((resolve) => o.socket.once('close', () => resolve()));
  });

  it('answers CONNECT 404 with the error record, as every other method', async () => {
    h = await startServer();
    const text = await new Promise<string>((resolve, reject) => {
      let received = '';
      const socket = connect({ host: '127.0.0.1', port: h!.port, ca: h!.ca, servername: 'localhost' }, () => {
        socket.write('CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
      });
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 404 /);
    expect(text).toContain('API-Version: 1.0.0');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'no such endpoint: CONNECT 127.0.0.1:22',
      code: 'FILE_NOT_FOUND',
    });
    expect((await get(h, '/health')).status).toBe(200);
  });
});
