import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import {
  certificateFingerprint,
  createMemoryLogger,
  generateSelfSignedCertificate,
  listen,
  watchCertificate,
  type CertificateWatch,
} from '../src';

type Pair = { cert: string; key: string };

/** Replaces a file as certbot does: write beside it, then rename over it. */
function replace(file: string, content: string): void {
  writeFileSync(`${file}.new`, content);
  renameSync(`${file}.new`, file);
}

/** A TLS connection; which certificate the server presented is what the tests compare (both are self-signed for localhost). */
function open(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => resolve(socket));
    socket.once('error', reject);
  });
}

const fingerprintOf = (socket: TLSSocket) => socket.getPeerX509Certificate()!.fingerprint256;

async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** One HTTP/1.1 request over an open TLS socket; resolves with the status line. */
function requestOver(socket: TLSSocket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (data: Buffer) => resolve(data.toString('latin1').split('\r\n')[0]!));
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  });
}

describe('watchCertificate', () => {
  let a: Pair;
  let b: Pair;
  let dir: string;
  let server: Server;
  let port: number;
  let watch: CertificateWatch | undefined;
  const sockets: TLSSocket[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([generateSelfSignedCertificate(['localhost']), generateSelfSignedCertificate(['localhost'])]);
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tls-reload-'));
    writeFileSync(join(dir, 'cert.pem'), a.cert);
    writeFileSync(join(dir, 'key.pem'), a.key);
    server = createServer({ cert: a.cert, key: a.key }, (_req, res) => res.end('ok'));
    port = (await listen(server, 0, '127.0.0.1')).port;
  });
  afterEach(async () => {
    watch?.close();
    for (const s of sockets.splice(0)) s.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('a renewed certificate reaches new connections while an open one stays open on the old one', async () => {
    const { logger, lines } = createMemoryLogger();
    watch = watchCertificate({
      certFile: join(dir, 'cert.pem'),
      keyFile: join(dir, 'key.pem'),
      servers: [server],
      logger,
      pollMs: 200,
      sighup: false,
    });
    const old = await open(port);
    sockets.push(old);
    expect(fingerprintOf(old)).toBe(certificateFingerprint(a.cert));

    replace(join(dir, 'key.pem'), b.key);
    replace(join(dir, 'cert.pem'), b.cert);
    await until(async () => {
      const fresh = await open(port);
      sockets.push(fresh);
      return fingerprintOf(fresh) === certificateFingerprint(b.cert);
    });
    expect(watch.fingerprint).toBe(certificateFingerprint(b.cert));
    expect(lines.some((l) => l.msg === 'TLS certificate reloaded' && l.sha256 === certificateFingerprint(b.cert))).toBe(true);
    // The connection opened before the swap was not dropped: it still answers, on the old certificate.
    expect(old.destroyed).toBe(false);
    expect(await requestOver(old)).toBe('HTTP/1.1 200 OK');
  });

  it('reloads on SIGHUP, and keeps the old pair when the files do not match', async () => {
    const { logger, lines } = createMemoryLogger();
    watch = watchCertificate({ certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem'), servers: [server], logger, pollMs: 0 });
    // A certificate with another's key: refused, the old pair stays.
    writeFileSync(join(dir, 'cert.pem'), b.cert);
    process.emit('SIGHUP');
    expect(watch.fingerprint).toBe(certificateFingerprint(a.cert));
    // Said as at start: which files are at fault.
    expect(lines.find((l) => String(l.msg).startsWith('TLS certificate not reloaded'))).toMatchObject({
      err: { message: 'TLS_CERT_FILE and TLS_KEY_FILE do not make a certificate and its key' },
    });
    writeFileSync(join(dir, 'key.pem'), b.key);
    process.emit('SIGHUP');
    expect(watch.fingerprint).toBe(certificateFingerprint(b.cert));
    const fresh = await open(port);
    sockets.push(fresh);
    expect(fingerprintOf(fresh)).toBe(certificateFingerprint(b.cert));
  });
});
