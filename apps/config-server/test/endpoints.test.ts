import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { base64ToBytes, bytesToHex, generateKey, nobleBackend, nodeBackend, openFromBase64 } from '@repo/crypto';
import { get, startServer, FILES, type Harness } from './support/harness';

const SPEC_HEADERS = {
  'x-encryption-type': 'quantum-resistant',
  'x-algorithm': 'X25519-ChaCha20-Poly1305',
  'api-version': '1.0.0',
  'supported-versions': '1.0.0',
};

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.close();
});

function openBody(text: string, key: Uint8Array): string {
  return new TextDecoder().decode(openFromBase64(key, text, { backend: nobleBackend }));
}

describe('GET /health', () => {
  it('answers the health record with the spec headers', async () => {
    const res = await get(h, '/health');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers).toMatchObject(SPEC_HEADERS);
    expect(res.json()).toEqual({
      status: 'healthy',
      service: 'config-server',
      encryption: 'quantum-resistant',
      algorithm: 'X25519-ChaCha20-Poly1305',
    });
  });

  it('answers 500 when the storage directory is gone', async () => {
    const other = await startServer({ STORAGE_DIR: join(h.dataDir, 'missing') });
    try {
      const res = await get(other, '/health');
      expect(res.status).toBe(500);
      expect(res.json()).toMatchObject({ error: 'internal server error', code: 'INTERNAL_ERROR' });
    } finally {
      await other.close();
    }
  });
});

describe('GET /info', () => {
  it('answers the info record with the endpoints map', async () => {
    const res = await get(h, '/info');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject(SPEC_HEADERS);
    const body = res.json();
    expect(body).toMatchObject({ name: expect.any(String), domain: 'localhost', protocol: 'HTTPS', encryption: 'quantum-resistant' });
    expect(body.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(body.port).toBe(0); // the configured PORT; 6666 by default
    expect(Object.keys(body.endpoints as object).sort()).toEqual(['GET /<env>/<file>', 'GET /health', 'GET /info']);
  });
});

describe('GET /<env>/<file>', () => {
  it('answers the sealed, substituted file with every spec header', async () => {
    const res = await get(h, '/dev/app.conf');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      ...SPEC_HEADERS,
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment; filename="app.conf"',
      'x-encryption-mode': 'psk',
    });
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(openBody(res.text, h.derivedKey('dev'))).toBe('url=postgres://db:5432/app\nmissing=${NOPE}\ncycle=${A}\nplain=$HOST\n');
  });

  it('lays the body out as Base64(nonce12 || ciphertext || tag16)', async () => {
    const res = await get(h, '/dev/plain.txt');
    const raw = base64ToBytes(res.text);
    expect(raw.length).toBe(12 + Buffer.byteLength(FILES['dev/plain.txt'] as string) + 16);
  });

  it('uses a fresh nonce per response', async () => {
    const a = await get(h, '/dev/plain.txt');
    const b = await get(h, '/dev/plain.txt');
    expect(a.text).not.toBe(b.text);
    expect(bytesToHex(base64ToBytes(a.text).subarray(0, 12))).not.toBe(bytesToHex(base64ToBytes(b.text).subarray(0, 12)));
    expect(openBody(a.text, h.derivedKey('dev'))).toBe(openBody(b.text, h.derivedKey('dev')));
  });

  it('seals each environment under its own key', async () => {
    const res = await get(h, '/prod/app.conf');
    expect(openBody(res.text, h.derivedKey('prod'))).toBe('url=prod-db\n');
    expect(() => openBody(res.text, h.derivedKey('dev'))).toThrow('invalid tag');
  });

  it('uses KEYS_DIR/<env>.key over derivation', async () => {
    const key = generateKey();
    mkdirSync(h.keysDir, { recursive: true });
    writeFileSync(join(h.keysDir, 'dev.key'), `${bytesToHex(key)}\n`);
    const res = await get(h, '/dev/plain.txt');
    expect(openBody(res.text, key)).toBe('no placeholders here\n');
  });

  it('answers 500 without detail when a key file is malformed', async () => {
    mkdirSync(h.keysDir, { recursive: true });
    writeFileSync(join(h.keysDir, 'dev.key'), 'not a key');
    const res = await get(h, '/dev/plain.txt');
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'internal server error', code: 'INTERNAL_ERROR' });
    expect(h.logs.some((l) => l.level === 50 && l.msg === 'request failed')).toBe(true);
  });

  it('serves nested paths', async () => {
    const res = await get(h, '/dev/sub/dir/nested.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="nested.txt"');
    expect(openBody(res.text, h.derivedKey('dev'))).toBe('nested db\n');
  });

  it('serves binary files byte for byte, without substitution', async () => {
    const res = await get(h, '/dev/binary.bin');
    const plain = openFromBase64(h.derivedKey('dev'), res.text, { backend: nodeBackend });
    expect(Buffer.from(plain).equals(FILES['dev/binary.bin'] as Buffer)).toBe(true);
  });

  it('logs a cycle with the names in it', async () => {
    await get(h, '/dev/app.conf');
    const cycle = h.logs.find((l) => l.kind === 'cycle');
    expect(cycle).toMatchObject({ env: 'dev', path: ['A', 'B', 'A'] });
    expect(JSON.stringify(h.logs)).not.toContain('postgres://');
  });

  it('picks up a changed .env without a restart', async () => {
    writeFileSync(join(h.storageDir, 'dev/.env'), 'URL=changed\nHOST=h2\n');
    const res = await get(h, '/dev/sub/dir/nested.txt');
    expect(openBody(res.text, h.derivedKey('dev'))).toBe('nested h2\n');
  });

  it('reuses a rendered file for FILE_CACHE_MS, then reads the disk again', async () => {
    let t = 0;
    const cached = await startServer({ FILE_CACHE_MS: '1000' }, { now: () => t });
    try {
      const key = cached.derivedKey('dev');
      expect(openBody((await get(cached, '/dev/plain.txt')).text, key)).toBe('no placeholders here\n');
      writeFileSync(join(cached.storageDir, 'dev/plain.txt'), 'edited\n');
      t += 999;
      expect(openBody((await get(cached, '/dev/plain.txt')).text, key)).toBe('no placeholders here\n');
      t += 1;
      expect(openBody((await get(cached, '/dev/plain.txt')).text, key)).toBe('edited\n');
    } finally {
      await cached.close();
    }
  });

  it('answers HEAD with the headers only', async () => {
    const res = await get(h, '/dev/plain.txt', {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(Number(res.headers['content-length'])).toBeGreaterThan(0);
  });
});

describe('404 FILE_NOT_FOUND', () => {
  it.each([
    ['a missing file', '/dev/nope.txt', 'file not found: dev/nope.txt'],
    ['a missing environment', '/staging/app.conf', 'file not found: staging/app.conf'],
    ['the .env file', '/dev/.env', 'file not found: dev/.env'],
    ['a dotfile in a sub-directory', '/dev/sub/.hidden', 'file not found: dev/sub/.hidden'],
    ['a directory', '/dev/sub', 'file not found: dev/sub'],
  ])('answers 404 for %s', async (_what, path, message) => {
    const res = await get(h, path);
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ error: message, code: 'FILE_NOT_FOUND' });
    expect(res.headers).toMatchObject(SPEC_HEADERS);
  });

  it('answers 404 for an unknown endpoint', async () => {
    const res = await get(h, '/nothing-here');
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ code: 'FILE_NOT_FOUND' });
  });
});

describe('403 ACCESS_DENIED', () => {
  const spellings = [
    '/dev/../secret.txt',
    '/dev/../../etc/passwd',
    '/dev/sub/../../prod/app.conf',
    '/dev/%2e%2e/secret.txt',
    '/dev/%2E%2E/secret.txt',
    '/dev/.%2e/secret.txt',
    '/dev/..%2fsecret.txt',
    '/dev/%2e%2e%2fsecret.txt',
    '/dev/%252e%252e/secret.txt',
    '/dev/%252e%252e%252fsecret.txt',
    '/dev/%25252e%25252e/secret.txt',
    '/dev/..\\secret.txt',
    '/dev/..%5csecret.txt',
    '/dev/..%5Csecret.txt',
    '/dev/plain.txt%00.png',
    '/dev/%2500',
    '/dev//etc/passwd',
    '/dev/%2fetc%2fpasswd',
    '/dev/C:%5cwindows%5cwin.ini',
    '/dev/C:/windows/win.ini',
    '/../etc/passwd',
    '/%2e%2e/etc/passwd',
    '/dev/./plain.txt',
  ];

  it.each(spellings)('answers 403 for %s', async (path) => {
    const res = await get(h, path);
    expect(res.status).toBe(403);
    expect(res.json()).toMatchObject({ error: 'access not authorized' });
  });

  it('answers 403 for a symlink that leaves the environment', async () => {
    symlinkSync(join(h.storageDir, '..', 'secret.txt'), join(h.storageDir, 'dev', 'link.txt'));
    symlinkSync(join(h.storageDir, 'prod'), join(h.storageDir, 'dev', 'prodlink'));
    expect((await get(h, '/dev/link.txt')).status).toBe(403);
    expect((await get(h, '/dev/prodlink/app.conf')).status).toBe(403);
  });

  it('serves a symlink that stays inside the environment', async () => {
    symlinkSync(join(h.storageDir, 'dev', 'plain.txt'), join(h.storageDir, 'dev', 'alias.txt'));
    const res = await get(h, '/dev/alias.txt');
    expect(res.status).toBe(200);
    expect(openBody(res.text, h.derivedKey('dev'))).toBe('no placeholders here\n');
  });
});

describe('400', () => {
  it('answers MISSING_PARAMETER when the file is missing', async () => {
    const res = await get(h, '/dev/');
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error: 'missing parameter: file', code: 'MISSING_PARAMETER' });
  });

  it.each([
    ['an env with other characters', '/dev_1/app.conf'],
    ['an env over 50 characters', `/${'e'.repeat(51)}/app.conf`],
    ['a file over 255 characters', `/dev/${'f'.repeat(256)}`],
    ['malformed percent-encoding', '/dev/%zz'],
  ])('answers 400 for %s', async (_what, path) => {
    const res = await get(h, path);
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_PARAMETER' });
  });

  it('accepts an env of exactly 50 characters and a file of 255', async () => {
    const env = 'e'.repeat(50);
    const file = 'f'.repeat(251) + '.txt';
    mkdirSync(join(h.storageDir, env));
    writeFileSync(join(h.storageDir, env, file), 'edge');
    const res = await get(h, `/${env}/${file}`);
    expect(res.status).toBe(200);
  });

  it('answers 400 for an unsupported API major version', async () => {
    const res = await get(h, '/health', { 'API-Version': '2.0.0' });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ error: 'unsupported API version' });
  });
});
