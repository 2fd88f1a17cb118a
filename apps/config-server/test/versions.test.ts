import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nobleBackend, openFromBase64 } from '@repo/crypto';
import { get, startServer, type Harness } from './support/harness';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.close();
});

const open = (text: string, key: Uint8Array) => new TextDecoder().decode(openFromBase64(key, text, { backend: nobleBackend }));
const versionOf = async (path: string) => {
  const res = await get(h, path);
  expect(res.status).toBe(200);
  return String(res.headers['x-config-version']);
};

describe('versions', () => {
  it('puts the version in X-Config-Version and a strong ETag, stable across fetches', async () => {
    const a = await get(h, '/dev/app.conf');
    const b = await get(h, '/dev/app.conf');
    const version = a.headers['x-config-version'] as string;
    expect(version).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.headers.etag).toBe(`"${version}"`);
    expect(b.headers['x-config-version']).toBe(version);
    expect(a.text).not.toBe(b.text); // fresh nonce, same version
  });

  it('gives two files with the same content different versions, revealing nothing shared', async () => {
    writeFileSync(join(h.storageDir, 'dev', 'copy.txt'), 'no placeholders here\n');
    expect(await versionOf('/dev/copy.txt')).not.toBe(await versionOf('/dev/plain.txt'));
  });

  it('changes when the file changes, and back when it is restored', async () => {
    const before = await versionOf('/dev/plain.txt');
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'edited\n');
    const after = await versionOf('/dev/plain.txt');
    expect(after).not.toBe(before);
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'no placeholders here\n');
    expect(await versionOf('/dev/plain.txt')).toBe(before);
  });

  it('changes when a .env value the file uses changes, and only then', async () => {
    const envFile = join(h.storageDir, 'dev', '.env');
    const before = await versionOf('/dev/sub/dir/nested.txt'); // uses HOST only
    writeFileSync(envFile, 'HOST=db\nPORT=5432\nURL=postgres://$HOST:${PORT}/app\nA=$B\nB=$A\nUNRELATED=new\n');
    expect(await versionOf('/dev/sub/dir/nested.txt')).toBe(before);
    writeFileSync(envFile, 'HOST=db2\nPORT=5432\nURL=postgres://$HOST:${PORT}/app\nA=$B\nB=$A\nUNRELATED=new\n');
    const after = await versionOf('/dev/sub/dir/nested.txt');
    expect(after).not.toBe(before);
    const res = await get(h, '/dev/sub/dir/nested.txt');
    expect(open(res.text, h.derivedKey('dev'))).toBe('nested db2\n');
  });

  it('differs between environments for the same path', async () => {
    expect(await versionOf('/dev/app.conf')).not.toBe(await versionOf('/prod/app.conf'));
  });

  it('keeps the version key in DATA_DIR, mode 0600', async () => {
    const path = join(h.dataDir, 'version.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('gives the same versions after a restart with the same DATA_DIR, other ones with another key', async () => {
    const version = await versionOf('/dev/app.conf');
    const again = await startServer({ DATA_DIR: h.dataDir, STORAGE_DIR: h.storageDir });
    const other = await startServer({ STORAGE_DIR: h.storageDir });
    try {
      expect((await get(again, '/dev/app.conf')).headers['x-config-version']).toBe(version);
      expect((await get(other, '/dev/app.conf')).headers['x-config-version']).not.toBe(version);
    } finally {
      await again.close();
      await other.close();
    }
  });
});

describe('If-None-Match', () => {
  it('answers 304 without a body for the current version, with the version headers', async () => {
    const version = await versionOf('/dev/app.conf');
    const res = await get(h, '/dev/app.conf', { 'If-None-Match': `"${version}"` });
    expect(res.status).toBe(304);
    expect(res.text).toBe('');
    expect(res.headers.etag).toBe(`"${version}"`);
    expect(res.headers['x-config-version']).toBe(version);
    expect(res.headers['x-encryption-type']).toBe('quantum-resistant');
  });

  it('accepts a list, a weak tag and *; answers 200 when no tag matches', async () => {
    const version = await versionOf('/dev/app.conf');
    expect((await get(h, '/dev/app.conf', { 'If-None-Match': `"old", W/"${version}"` })).status).toBe(304);
    expect((await get(h, '/dev/app.conf', { 'If-None-Match': '*' })).status).toBe(304);
    const changed = await get(h, '/dev/app.conf', { 'If-None-Match': '"AAAAAAAAAAAAAAAAAAAAAA"' });
    expect(changed.status).toBe(200);
    expect(changed.headers['x-config-version']).toBe(version);
  });

  it('answers 200 with the new body once the file changed', async () => {
    const version = await versionOf('/dev/plain.txt');
    writeFileSync(join(h.storageDir, 'dev', 'plain.txt'), 'v2\n');
    const res = await get(h, '/dev/plain.txt', { 'If-None-Match': `"${version}"` });
    expect(res.status).toBe(200);
    expect(open(res.text, h.derivedKey('dev'))).toBe('v2\n');
  });

  it('counts a 304 against the rate limit like any request', async () => {
    const limited = await startServer({ RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_SECOND: '0' });
    try {
      const first = await get(limited, '/dev/plain.txt');
      expect(first.headers['x-ratelimit-remaining']).toBe('2');
      const tag = first.headers.etag as string;
      const second = await get(limited, '/dev/plain.txt', { 'If-None-Match': tag });
      expect(second.status).toBe(304);
      expect(second.headers['x-ratelimit-remaining']).toBe('1');
      expect((await get(limited, '/dev/plain.txt', { 'If-None-Match': tag })).status).toBe(304);
      expect((await get(limited, '/dev/plain.txt', { 'If-None-Match': tag })).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('?version=', () => {
  it('serves an earlier version, sealed afresh, after the file and its .env changed', async () => {
    const first = await get(h, '/dev/app.conf');
    const v1 = first.headers['x-config-version'] as string;
    writeFileSync(join(h.storageDir, 'dev', '.env'), 'HOST=other\nPORT=1\nURL=postgres://$HOST:${PORT}/app\n');
    writeFileSync(join(h.storageDir, 'dev', 'app.conf'), 'url=${URL}\nsecond=1\n');
    const current = await get(h, '/dev/app.conf');
    expect(current.headers['x-config-version']).not.toBe(v1);
    expect(open(current.text, h.derivedKey('dev'))).toBe('url=postgres://other:1/app\nsecond=1\n');

    const old = await get(h, `/dev/app.conf?version=${v1}`);
    expect(old.status).toBe(200);
    expect(old.headers['x-config-version']).toBe(v1);
    expect(old.headers.etag).toBe(`"${v1}"`);
    expect(old.text).not.toBe(first.text);
    expect(open(old.text, h.derivedKey('dev'))).toBe(open(first.text, h.derivedKey('dev')));
    expect((await get(h, `/dev/app.conf?version=${v1}`, { 'If-None-Match': `"${v1}"` })).status).toBe(304);
  });

  it('keeps the history in DATA_DIR, sealed, never the plaintext', async () => {
    await get(h, '/dev/plain.txt');
    const dir = join(h.dataDir, 'history', 'dev');
    const [folder] = readdirSync(dir);
    const [entry] = readdirSync(join(dir, folder!));
    const path = join(dir, folder!, entry!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path).includes('no placeholders')).toBe(false);
  });

  it('keeps at most VERSION_HISTORY_MAX versions per file, dropping the oldest', async () => {
    const small = await startServer({ VERSION_HISTORY_MAX: '2' });
    try {
      const seen: string[] = [];
      for (const text of ['one\n', 'two\n', 'three\n']) {
        writeFileSync(join(small.storageDir, 'dev', 'plain.txt'), text);
        seen.push((await get(small, '/dev/plain.txt')).headers['x-config-version'] as string);
      }
      expect((await get(small, `/dev/plain.txt?version=${seen[1]}`)).status).toBe(200);
      const gone = await get(small, `/dev/plain.txt?version=${seen[0]}`);
      expect(gone.status).toBe(404);
      expect(gone.json()).toMatchObject({ code: 'VERSION_NOT_FOUND' });
    } finally {
      await small.close();
    }
  });

  it('answers 404 VERSION_NOT_FOUND for an unknown version and 400 for a malformed one', async () => {
    const unknown = await get(h, '/dev/app.conf?version=AAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({
      error: 'version not found: dev/app.conf',
      code: 'VERSION_NOT_FOUND',
      details: 'unknown version, or no longer kept',
    });
    const bad = await get(h, '/dev/app.conf?version=../../x');
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'INVALID_PARAMETER', error: 'invalid parameter: version' });
    expect((await get(h, '/dev/app.conf?version=a&version=b')).status).toBe(400);
  });

  it('does not serve a version of one file as another', async () => {
    const v = await versionOf('/dev/plain.txt');
    expect((await get(h, `/dev/app.conf?version=${v}`)).status).toBe(404);
    expect((await get(h, `/prod/app.conf?version=${await versionOf('/dev/app.conf')}`)).status).toBe(404);
  });

  it('serves no version of a file that is gone', async () => {
    const v = await versionOf('/dev/plain.txt');
    rmSync(join(h.storageDir, 'dev', 'plain.txt'));
    const res = await get(h, `/dev/plain.txt?version=${v}`);
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ code: 'FILE_NOT_FOUND' });
    expect(existsSync(join(h.dataDir, 'history'))).toBe(true);
  });
});
