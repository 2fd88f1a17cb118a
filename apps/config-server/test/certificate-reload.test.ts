import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { hexToBytes } from '@repo/crypto';
import { certificateFingerprint, createSilentLogger, generateSelfSignedCertificate, listen } from '@repo/service';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createKeyring } from '../src/keyring';
import { MASTER_KEY_HEX } from './support/harness';
import { TLS12_CBC_ONLY, tlsHandshake } from './support/tls-handshake';

function replace(file: string, content: string): void {
  writeFileSync(`${file}.new`, content);
  renameSync(`${file}.new`, file);
}

/** A TLS connection; the test compares which certificate the server presented (both self-signed). */
function open(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => resolve(socket));
    socket.once('error', reject);
  });
}

function get(socket: TLSSocket, path: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (data: Buffer) => resolve(data.toString('latin1').split('\r\n')[0]!));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  });
}

// README, "Operations": TLS_CERT_FILE/TLS_KEY_FILE replaced on disk reach new connections; open ones stay.
describe('config server certificate reload', () => {
  it('serves a renewed certificate to new connections without dropping an open one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'config-server-tls-'));
    const sockets: TLSSocket[] = [];
    const [a, b] = await Promise.all([generateSelfSignedCertificate(['localhost']), generateSelfSignedCertificate(['localhost'])]);
    const certFile = join(root, 'tls', 'cert.pem');
    const keyFile = join(root, 'tls', 'key.pem');
    mkdirSync(join(root, 'tls'));
    mkdirSync(join(root, 'storage'));
    writeFileSync(certFile, a.cert);
    writeFileSync(keyFile, a.key);
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: join(root, 'data'),
      STORAGE_DIR: join(root, 'storage'),
      CONFIG_MASTER_KEY: MASTER_KEY_HEX,
      TLS_CERT_FILE: certFile,
      TLS_KEY_FILE: keyFile,
    });
    const keyring = createKeyring({ keysDir: config.keysDir, masterKey: hexToBytes(MASTER_KEY_HEX) });
    const service = createApp(config, { logger: createSilentLogger(), keyring });
    try {
      await service.start();
      const { port } = await listen(service.servers.https, 0, '127.0.0.1');
      const old = await open(port);
      sockets.push(old);
      expect(old.getPeerX509Certificate()!.fingerprint256).toBe(certificateFingerprint(a.cert));
      expect(await get(old, '/health')).toBe('HTTP/1.1 200 OK');

      replace(keyFile, b.key);
      replace(certFile, b.cert);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const fresh = await open(port);
        sockets.push(fresh);
        if (fresh.getPeerX509Certificate()!.fingerprint256 === certificateFingerprint(b.cert)) break;
        if (Date.now() > deadline) throw new Error('the renewed certificate never reached a new connection');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(old.destroyed).toBe(false);
      expect(await get(old, '/health')).toBe('HTTP/1.1 200 OK');
      // The renewed certificate comes with the same TLS policy: no CBC suite, AEAD ones still.
      expect((await tlsHandshake(port, TLS12_CBC_ONLY)).ok).toBe(false);
      expect(await tlsHandshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' })).toMatchObject({ ok: true });
    } finally {
      for (const s of sockets) s.destroy();
      await service.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
