import { createPrivateKey, X509Certificate, webcrypto } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { ConfigError } from '@repo/config';
import { writeSecretFile } from './secret-file';

/** A certificate and its private key, both PEM, with the certificate's SHA-256 fingerprint. */
export interface TlsCredentials {
  cert: string;
  key: string;
  /** SHA-256 of the DER certificate, as `AB:CD:…` (what `openssl x509 -fingerprint -sha256` prints). */
  fingerprint: string;
  /** `files`: from TLS_CERT_FILE/TLS_KEY_FILE; `generated`: made now; `stored`: made on an earlier start. */
  source: 'files' | 'generated' | 'stored';
}

/** Options of {@link loadOrCreateTlsCredentials}. */
export interface TlsOptions {
  certFile?: string;
  keyFile?: string;
  /** Where a generated certificate is kept (`tls-cert.pem`, `tls-key.pem`). */
  dataDir: string;
  /** Host names and IP addresses the generated certificate names. */
  hosts?: string[];
  /** Validity of a generated certificate, in days. */
  days?: number;
  /** The other options the servers' secure context gets with the operator's pair (`minVersion`, `ciphers`, …): the pair is checked with them. */
  context?: SecureContextOptions;
}

/** SHA-256 fingerprint of a PEM certificate, as `AB:CD:…`. */
export function certificateFingerprint(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/**
 * Loads the certificate and key named by the operator or, when none is named, one generated
 * on an earlier start in `dataDir`, or generates a self-signed ECDSA P-256 certificate for the
 * given hosts (default localhost, 127.0.0.1 and ::1) and stores it with mode 0600.
 */
export async function loadOrCreateTlsCredentials(options: TlsOptions): Promise<TlsCredentials> {
  if (options.certFile !== undefined || options.keyFile !== undefined) {
    if (options.certFile === undefined || options.keyFile === undefined) {
      throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
    }
    return readTlsFiles(options.certFile, options.keyFile, options.context);
  }
  const certPath = join(options.dataDir, 'tls-cert.pem');
  const keyPath = join(options.dataDir, 'tls-key.pem');
  if (existsSync(certPath) && existsSync(keyPath)) {
    const cert = readFileSync(certPath, 'utf8');
    if (new Date(new X509Certificate(cert).validTo).getTime() > Date.now() + 86_400_000) {
      return { cert, key: readFileSync(keyPath, 'utf8'), fingerprint: certificateFingerprint(cert), source: 'stored' };
    }
  }
  const generated = await generateSelfSignedCertificate(options.hosts ?? ['localhost', '127.0.0.1', '::1'], options.days ?? 825);
  writeSecretFile(keyPath, generated.key);
  writeSecretFile(certPath, generated.cert);
  return { ...generated, fingerprint: certificateFingerprint(generated.cert), source: 'generated' };
}

/**
 * Reads the operator's pair (`TLS_CERT_FILE`, `TLS_KEY_FILE`) and checks it as a server will be
 * given it, with `context` (the secure context's other options), so that a mistake names the
 * variable at fault rather than OpenSSL's message alone: a `ConfigError` when either file cannot
 * be read or holds no PEM certificate or key, when the key is not the certificate's, or when
 * OpenSSL refuses the pair (a key it deems too small, say). At start, and at each reload.
 */
export function readTlsFiles(certFile: string, keyFile: string, context: SecureContextOptions = {}): TlsCredentials {
  const cert = readPem(certFile, 'TLS_CERT_FILE');
  const key = readPem(keyFile, 'TLS_KEY_FILE');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (err) {
    throw new ConfigError(`TLS_CERT_FILE (${certFile}) does not hold a PEM certificate: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new ConfigError(`TLS_KEY_FILE (${keyFile}) does not hold a PEM private key: ${(err as Error).message}`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE do not make a certificate and its key');
  }
  try {
    createSecureContext({ ...context, cert, key });
  } catch (err) {
    throw new ConfigError(`OpenSSL refuses TLS_CERT_FILE and TLS_KEY_FILE: ${(err as Error).message}`);
  }
  return { cert, key, fingerprint: certificate.fingerprint256, source: 'files' };
}

function readPem(path: string, name: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name} (${path}) cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

const IP_RE = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:]*)$/;

/** Generates a self-signed ECDSA P-256 server certificate for `hosts` (DNS names or IPs). */
export async function generateSelfSignedCertificate(hosts: string[], days = 825): Promise<{ cert: string; key: string }> {
  // Loaded on demand: only a service that generates a certificate pays for it.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const crypto = webcrypto;
  x509.cryptoProvider.set(crypto);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore.getTime() + days * 86_400_000);
  const serial = Buffer.from(crypto.getRandomValues(new Uint8Array(16)));
  serial[0]! &= 0x7f; // positive serial number (RFC 5280, 4.1.2.2)
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: `CN=${hosts[0] ?? 'localhost'}`,
    notBefore,
    notAfter,
    keys: keys as Parameters<typeof import('@peculiar/x509').X509CertificateGenerator.createSelfSigned>[0]['keys'],
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => (IP_RE.test(h) ? { type: 'ip', value: h } : { type: 'dns', value: h }))),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim()}\n-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString('pem') + '\n', key };
}
