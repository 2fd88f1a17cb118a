import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@repo/config';
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { generateSelfSignedCertificate, loadOrCreateTlsCredentials } from '../src';
import { temporaryFolders } from '../src/testing';

const temporaryDir = temporaryFolders();

/** A self-signed certificate on an RSA key of 512 bits: well formed, its key its own, and refused by OpenSSL (too small). */
async function weakPair(): Promise<{ cert: string; key: string }> {
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 512 };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: 'CN=localhost',
      notBefore: new Date(),
      notAfter: new Date(Date.now() + 86_400_000),
      signingAlgorithm: algorithm,
      keys,
    },
    webcrypto,
  );
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return {
    cert: cert.toString('pem'),
    key: `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`,
  };
}

describe('loadOrCreateTlsCredentials with the operator files', () => {
  const dir = temporaryDir('service-tls');
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
    await expect(load(join(dir, 'missing.pem'), garbage)).rejects.toThrow(
      new ConfigError(`TLS_CERT_FILE (${join(dir, 'missing.pem')}) cannot be read: ENOENT`),
    );
    await expect(load(cert, file('other-key.pem', b.key))).rejects.toThrow(
      new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE do not make a certificate and its key'),
    );
    await expect(load(cert, garbage)).rejects.toBeInstanceOf(ConfigError);
  });

  it('names both files when OpenSSL refuses the pair, and checks it with the context the servers get', async () => {
    const weak = await weakPair();
    await expect(load(file('weak-cert.pem', weak.cert), file('weak-key.pem', weak.key))).rejects.toThrow(
      new ConfigError('OpenSSL refuses TLS_CERT_FILE and TLS_KEY_FILE: error:0A00018F:SSL routines::ee key too small'),
    );
    const good = { certFile: file('cert.pem', a.cert), keyFile: file('key.pem', a.key), dataDir: dir };
    await expect(loadOrCreateTlsCredentials({ ...good, context: { minVersion: 'TLSv1.2' } })).resolves.toMatchObject({ source: 'files' });
    await expect(loadOrCreateTlsCredentials({ ...good, context: { ciphers: 'NO-SUCH-SUITE' } })).rejects.toThrow(/^OpenSSL refuses/);
  });
});
