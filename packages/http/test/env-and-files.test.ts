import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import {
  ConfigError,
  certificateFingerprint,
  createMemoryLogger,
  closeGracefully,
  listen,
  loadOrCreateSecretFile,
  loadOrCreateTlsCredentials,
  readBool,
  readEnum,
  readHex,
  readInt,
  readList,
  readPort,
} from '../src';

describe('environment readers', () => {
  it('reads values and falls back on defaults', () => {
    const env = { P: '8080', B: 'yes', L: 'a, b,,c', E: 'redis', H: 'AB'.repeat(32) };
    expect(readPort(env, 'P', 1)).toBe(8080);
    expect(readPort(env, 'MISSING', 6666)).toBe(6666);
    expect(readBool(env, 'B', false)).toBe(true);
    expect(readList(env, 'L')).toEqual(['a', 'b', 'c']);
    expect(readEnum(env, 'E', ['sqlite', 'redis'] as const, 'sqlite')).toBe('redis');
    expect(readHex(env, 'H', 32)).toBe('ab'.repeat(32));
  });

  it('names the variable, not the value, when it is malformed', () => {
    expect(() => readPort({ PORT: '70000' }, 'PORT', 1)).toThrow(new ConfigError('PORT must be an integer from 0 to 65535'));
    expect(() => readInt({ N: '1.5' }, 'N', 1)).toThrow(ConfigError);
    expect(() => readBool({ X: 'maybe' }, 'X', false)).toThrow('X must be true or false');
    expect(() => readHex({ K: 'secret' }, 'K', 32)).toThrow(/^K must be 64 hex characters$/);
  });
});

describe('loadOrCreateSecretFile', () => {
  it('creates the file with mode 0600 once, then reads it back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-'));
    const path = join(dir, 'sub', 'master.key');
    const first = loadOrCreateSecretFile(path, () => 'abc');
    expect(first).toEqual({ value: 'abc', created: true, exposed: false });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSecretFile(path, () => 'other')).toEqual({ value: 'abc', created: false, exposed: false });
  });
});

describe('loadOrCreateTlsCredentials', () => {
  it('generates a certificate once, serves real TLS with it, and reuses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tls-'));
    const made = await loadOrCreateTlsCredentials({ dataDir: dir });
    expect(made.source).toBe('generated');
    expect(made.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(statSync(join(dir, 'tls-key.pem')).mode & 0o777).toBe(0o600);
    const again = await loadOrCreateTlsCredentials({ dataDir: dir });
    expect(again).toMatchObject({ source: 'stored', fingerprint: made.fingerprint });

    const server = createServer({ cert: made.cert, key: made.key }, (_req, res) => res.end('secure'));
    const { port } = await listen(server, 0, '127.0.0.1');
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', ca: made.cert, servername: 'localhost' }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end();
      });
      expect(body).toBe('secure');
    } finally {
      await closeGracefully(server, 100);
    }
  });

  it('loads the operator files and refuses half a pair', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tls-'));
    const made = await loadOrCreateTlsCredentials({ dataDir: dir });
    writeFileSync(join(dir, 'c.pem'), made.cert);
    writeFileSync(join(dir, 'k.pem'), made.key);
    const loaded = await loadOrCreateTlsCredentials({ dataDir: dir, certFile: join(dir, 'c.pem'), keyFile: join(dir, 'k.pem') });
    expect(loaded).toMatchObject({ source: 'files', fingerprint: certificateFingerprint(readFileSync(join(dir, 'c.pem'), 'utf8')) });
    await expect(loadOrCreateTlsCredentials({ dataDir: dir, certFile: join(dir, 'c.pem') })).rejects.toThrow(ConfigError);
  });
});

describe('createLogger', () => {
  it('redacts credentials at the top level and in headers', () => {
    const { logger, lines } = createMemoryLogger();
    logger.info({ password: 'p1', token: 't1', headers: { authorization: 'Basic abc' }, user: 'alice' }, 'x');
    expect(lines[0]).toMatchObject({
      password: '[redacted]',
      token: '[redacted]',
      headers: { authorization: '[redacted]' },
      user: 'alice',
    });
    expect(JSON.stringify(lines[0])).not.toMatch(/p1|t1|abc/);
  });
});
