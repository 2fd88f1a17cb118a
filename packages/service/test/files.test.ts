import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:https';
import { join } from 'node:path';
import { ConfigError } from '@repo/config';
import {
  certificateFingerprint,
  createMemoryLogger,
  closeGracefully,
  listen,
  loadOrCreateSecretFile,
  loadOrCreateTlsCredentials,
  writeSecretFile,
} from '../src';
import { asRoot, callAsOtherUser, childUid, folderWithMode } from './support/other-user';
import { temporaryFolders } from '../src/testing';

const temporaryDir = temporaryFolders();

describe('a folder this process may not write or reach', () => {
  it("writeSecretFile names the file, the folder and the uid instead of a temporary file's EACCES, and leaves nothing", () => {
    const closed = folderWithMode(0o555);
    expect(callAsOtherUser('writeSecretFile', join(closed, 'relay-id'), 'relay-1\n')).toEqual({
      error: `cannot create ${join(closed, 'relay-id')}: this process (uid ${childUid}) may not write in ${closed}`,
    });
    expect(readdirSync(closed)).toEqual([]);
  });

  it('writeSecretFile that cannot put the file in place leaves no temporary copy of the secret', () => {
    const dir = temporaryDir('secret');
    // A folder where the file should be: the temporary file is written, the rename refused.
    mkdirSync(join(dir, 'master.key', 'inside'), { recursive: true });
    expect(() => writeSecretFile(join(dir, 'master.key'), 'secret')).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir)).toEqual(['master.key']);
  });

  it('readOrCreateSecretFile in a folder it may not enter says so', () => {
    const sealed = folderWithMode(0o700);
    const inside = join(sealed, 'data', 'master.key');
    if (!asRoot) chmodSync(sealed, 0o000);
    try {
      expect(callAsOtherUser('readOrCreateSecretFile', inside)).toEqual({
        error: `cannot read ${inside}: this process (uid ${childUid}) may not read it or reach its folder`,
      });
    } finally {
      chmodSync(sealed, 0o700);
    }
  });
});

describe('loadOrCreateSecretFile', () => {
  it('creates the file with mode 0600 once, then reads it back', () => {
    const dir = temporaryDir('secret');
    const path = join(dir, 'sub', 'master.key');
    const first = loadOrCreateSecretFile(path, () => 'abc');
    expect(first).toEqual({ value: 'abc', created: true, exposed: false });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSecretFile(path, () => 'other')).toEqual({ value: 'abc', created: false, exposed: false });
  });
});

describe('loadOrCreateTlsCredentials', () => {
  it('generates a certificate once, serves real TLS with it, and reuses it', async () => {
    const dir = temporaryDir('tls');
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
    const dir = temporaryDir('tls');
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
