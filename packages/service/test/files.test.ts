import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@repo/config';
import {
  certificateFingerprint,
  createMemoryLogger,
  closeGracefully,
  ensurePrivateFile,
  listen,
  loadOrCreateSecretFile,
  loadOrCreateTlsCredentials,
} from '../src';
import { unprivilegedUser } from '../src/testing';

// Permissions do not bind root: as root, the function runs in a child as nobody (65534)
// (unprivilegedUser), on files and folders root owns; as anyone else, in a child as that user.
const asRoot = process.getuid?.() === 0;
const uid = asRoot ? 65_534 : process.getuid?.();

/** Calls one export of ../src in a child run as {@link unprivilegedUser}: what it returned, or its error's message. */
function callAsOtherUser(name: string, ...args: unknown[]): { value: unknown } | { error: string } {
  const call = `require('./src').${name}(...${JSON.stringify(args)})`;
  const script = `let outcome; try { outcome = { value: ${call} } } catch (err) { outcome = { error: err.message } } process.stdout.write(JSON.stringify(outcome))`;
  const child = spawnSync(process.execPath, ['-r', '@repo/ts-register', '-e', script], {
    cwd: join(__dirname, '..'),
    ...unprivilegedUser(),
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
  });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as { value: unknown } | { error: string };
}

/** A temporary folder with `mode` (0777: anyone may write in it). */
function folderWithMode(mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'private-'));
  chmodSync(dir, mode);
  return dir;
}

describe('ensurePrivateFile', () => {
  it('creates a missing file empty with mode 0600 (its directory 0700), and narrows an existing one to 0600, keeping its content', () => {
    const dir = mkdtempSync(join(tmpdir(), 'private-'));
    const fresh = join(dir, 'sub', 'events.db');
    expect(ensurePrivateFile(fresh)).toEqual({ exposed: false });
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'sub')).mode & 0o777).toBe(0o700);
    expect(readFileSync(fresh, 'utf8')).toBe('');
    const older = join(dir, 'older.db');
    writeFileSync(older, 'rows');
    chmodSync(older, 0o644);
    ensurePrivateFile(older);
    expect(statSync(older).mode & 0o777).toBe(0o600);
    expect(readFileSync(older, 'utf8')).toBe('rows');
  });

  // Another user's file is left as it is and reported, never thrown: the caller's open says
  // whether it can be used.
  const ensurePrivateFileAsOther = (path: string): unknown => {
    const outcome = callAsOtherUser('ensurePrivateFile', path);
    expect(outcome).not.toHaveProperty('error');
    return (outcome as { value: unknown }).value;
  };

  it('leaves a file it may not open for writing (mode 0444) as it is, reported exposed with its owner, mode and what to do', () => {
    const file = join(folderWithMode(0o777), 'events.db');
    writeFileSync(file, 'rows');
    chmodSync(file, 0o444);
    const owner = statSync(file).uid;
    expect(ensurePrivateFileAsOther(file)).toEqual({
      exposed: true,
      reason: `${file} is readable or writable by other users and this process may not narrow it (EACCES: owned by uid ${owner}, mode 0444): chmod 600 it as its owner`,
    });
    expect(statSync(file).mode & 0o777).toBe(0o444);
    expect(readFileSync(file, 'utf8')).toBe('rows');
  });

  it("leaves another user's writable file (mode 0666) as it is, reported exposed: the process may use it but not narrow it", () => {
    // Not root: /dev/null is root's, mode 0666, and chmod on it is refused (EPERM).
    let file = '/dev/null';
    if (asRoot) {
      file = join(folderWithMode(0o777), 'events.db');
      writeFileSync(file, 'rows');
      chmodSync(file, 0o666);
    }
    expect(ensurePrivateFileAsOther(file)).toEqual({
      exposed: true,
      reason: `${file} is readable or writable by other users and this process may not narrow it (EPERM: owned by uid 0, mode 0666): chmod 600 it as its owner`,
    });
    expect(statSync(file).mode & 0o777).toBe(0o666);
  });

  it('reports nothing for a file of another user that others may not read: the open that follows refuses it or not', () => {
    const file = join(folderWithMode(0o777), 'events.db');
    writeFileSync(file, 'rows');
    chmodSync(file, 0o600);
    if (!asRoot) return expect(ensurePrivateFile(file)).toEqual({ exposed: false });
    expect(ensurePrivateFileAsOther(file)).toEqual({ exposed: false });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('a folder this process may not write or reach', () => {
  it("writeSecretFile and ensurePrivateFile name the file, the folder and the uid instead of a temporary file's EACCES", () => {
    const closed = folderWithMode(0o555);
    for (const [name, args] of [
      ['writeSecretFile', [join(closed, 'relay-id'), 'relay-1\n']],
      ['ensurePrivateFile', [join(closed, 'relay-id')]],
    ] as const) {
      expect(callAsOtherUser(name, ...args)).toEqual({
        error: `cannot create ${join(closed, 'relay-id')}: this process (uid ${uid}) may not write in ${closed}`,
      });
    }
    expect(readdirSync(closed)).toEqual([]);
  });

  it('a folder it may not enter: reading a secret or making a database private says so', () => {
    const sealed = folderWithMode(0o700);
    const inside = join(sealed, 'data', 'master.key');
    if (!asRoot) chmodSync(sealed, 0o000);
    try {
      expect(callAsOtherUser('readOrCreateSecretFile', inside)).toEqual({
        error: `cannot read ${inside}: this process (uid ${uid}) may not read it or reach its folder`,
      });
      expect(callAsOtherUser('ensurePrivateFile', inside)).toEqual({
        error: `cannot create ${inside}: this process (uid ${uid}) may not reach ${join(sealed, 'data')}`,
      });
    } finally {
      chmodSync(sealed, 0o700);
    }
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
