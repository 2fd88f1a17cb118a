import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { certificateFingerprint, generateSelfSignedCertificate } from '@repo/service';
import { connect, removeTempDirs, startRelay, tempDir, WALLET } from './support/helpers';

function replace(file: string, content: string): void {
  writeFileSync(`${file}.new`, content);
  renameSync(`${file}.new`, file);
}

function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerX509Certificate()!.fingerprint256;
      socket.destroy();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

// README, "Operations": on SIGHUP (and when the files change) new wss connections get the
// renewed certificate; open WebSockets stay connected.
describe('relay (wss) certificate reload', () => {
  afterAll(() => removeTempDirs());

  it('SIGHUP installs the renewed certificate for new connections; an open WebSocket stays', async () => {
    const [a, b] = await Promise.all([generateSelfSignedCertificate(['localhost']), generateSelfSignedCertificate(['localhost'])]);
    const dir = join(tempDir(), 'tls');
    mkdirSync(dir);
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    writeFileSync(certFile, a.cert);
    writeFileSync(keyFile, a.key);
    const relay = await startRelay({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    try {
      expect(relay.wsUrl.startsWith('wss://')).toBe(true);
      expect(await presented(relay.wsPort)).toBe(certificateFingerprint(a.cert));
      const client = await connect(relay.wsUrl, { ...WALLET, rejectUnauthorized: false });
      replace(keyFile, b.key);
      replace(certFile, b.cert);
      process.emit('SIGHUP');
      expect(await presented(relay.wsPort)).toBe(certificateFingerprint(b.cert));
      // The WebSocket opened before the swap still answers.
      expect(await client.request('ping')).toMatchObject({ type: 'pong' });
      client.ws.close();
    } finally {
      await relay.close();
    }
  });
});
