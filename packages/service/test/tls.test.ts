import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@repo/config';
import { generateSelfSignedCertificate, loadOrCreateTlsCredentials } from '../src';

describe('loadOrCreateTlsCredentials with the operator files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'service-tls-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  let a: { cert: string; key: string };
  let b: { cert: string; key: string };
  beforeAll(async () => {
    a = await generateSelfSignedCertificate(['localhost']);
    b = await generateSelfSignedCertificate(['localhost']);
  });
  const load = (certFile: string, keyFile: string) => loadOrCreateTlsCredentials({ certFile, keyFile, dataDir: dir });

  it('loads a pair that belongs together, with its fingerprint', async () => {
    const tls = await load(file('cert.pem', a.cert), file('key.pem', a.key));
    expect(tls).toMatchObject({ cert: a.cert, key: a.key, source: 'files' });
    expect(tls.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });

  it('names the variable at fault: not a certificate, not a key, or not the key of the certificate', async () => {
    const garbage = file('garbage.pem', 'not a pem file\n');
    const cert = file('cert.pem', a.cert);
    await expect(load(garbage, file('key.pem', a.key))).rejects.toThrow(
      new RegExp(`^TLS_CERT_FILE \\(${garbage.replaceAll('.', '\\.')}\\) does not hold a PEM certificate: `),
    );
    await expect(load(cert, garbage)).rejects.toThrow(`TLS_KEY_FILE (${garbage}) does not hold a PEM private key: `);
    await expect(load(cert, file('other-key.pem', b.key))).rejects.toThrow(
      new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE do not make a certificate and its key'),
    );
    await expect(load(cert, garbage)).rejects.toBeInstanceOf(ConfigError);
  });
});
