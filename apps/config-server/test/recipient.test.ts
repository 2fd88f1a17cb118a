import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHpkeSuite, nobleBackend, nobleX25519, type HpkeKemName } from '@repo/crypto';
import { get, registerClientKey, startServer, type Harness } from './support/harness';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.close();
});

const SPEC_HEADERS = {
  'x-encryption-type': 'quantum-resistant',
  'x-algorithm': 'X25519-ChaCha20-Poly1305',
  'api-version': '1.0.0',
  'supported-versions': '1.0.0',
};

// The client side opens with the portable (pure JS) build: a second code path from the server's.
const CASES = [
  ['X25519', 'X25519', 'hpke-x25519', 'DHKEM-X25519-HKDF-SHA256/HKDF-SHA256/ChaCha20Poly1305'],
  ['X-Wing', 'X-Wing', 'hpke-xwing', 'X-Wing/HKDF-SHA256/ChaCha20Poly1305'],
] as const;

function clientSuite(kem: HpkeKemName) {
  return createHpkeSuite(kem, { x25519: nobleX25519, aead: nobleBackend });
}

function headersFor(kem: string, publicKey: Uint8Array): Record<string, string> {
  return { 'X-Client-Kem': kem, 'X-Client-Public-Key': Buffer.from(publicKey).toString('base64') };
}

function open(kem: HpkeKemName, privateKey: Uint8Array, body: string, info: string): string {
  const sealed = new Uint8Array(Buffer.from(body, 'base64'));
  return new TextDecoder().decode(clientSuite(kem).openBytes(privateKey, sealed, { info: new TextEncoder().encode(info) }));
}

describe.each(CASES)('GET /<env>/<file> sealed to a registered %s key', (kem, header, mode, suiteName) => {
  it('answers the file sealed with HPKE, with the mode and suite headers', async () => {
    const keys = clientSuite(kem).generateKeyPair();
    registerClientKey(h, 'dev', 'alice', keys.publicKey);
    const res = await get(h, '/dev/app.conf', headersFor(header, keys.publicKey));
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      ...SPEC_HEADERS,
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment; filename="app.conf"',
      'x-encryption-mode': mode,
      'x-hpke-suite': suiteName,
    });
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    const plain = open(kem, keys.privateKey, res.text, 'config-server/v1/file/dev/app.conf');
    expect(plain).toBe('url=postgres://db:5432/app\nmissing=${NOPE}\ncycle=${A}\nplain=$HOST\n');
  });

  it('lays the body out as Base64(enc || ciphertext || tag)', async () => {
    const suite = clientSuite(kem);
    const keys = suite.generateKeyPair();
    registerClientKey(h, 'dev', 'alice', keys.publicKey);
    const res = await get(h, '/dev/plain.txt', headersFor(header, keys.publicKey));
    expect(Buffer.from(res.text, 'base64').length).toBe(suite.kem.lengths.enc + 'no placeholders here\n'.length + 16);
  });

  it('binds the body to the path asked for (HPKE info)', async () => {
    const keys = clientSuite(kem).generateKeyPair();
    registerClientKey(h, 'dev', 'alice', keys.publicKey);
    const res = await get(h, '/dev/sub/dir/nested.txt', headersFor(header, keys.publicKey));
    expect(open(kem, keys.privateKey, res.text, 'config-server/v1/file/dev/sub/dir/nested.txt')).toBe('nested db\n');
    expect(() => open(kem, keys.privateKey, res.text, 'config-server/v1/file/dev/plain.txt')).toThrow('invalid tag');
  });

  it('answers 403 ACCESS_DENIED for a key not registered for the environment, whether the file exists or not', async () => {
    const keys = clientSuite(kem).generateKeyPair();
    registerClientKey(h, 'prod', 'alice', keys.publicKey); // registered elsewhere only
    for (const path of ['/dev/app.conf', '/dev/missing.conf', '/nowhere/app.conf']) {
      const res = await get(h, path, headersFor(header, keys.publicKey));
      expect(res.status).toBe(403);
      expect(res.json()).toEqual({ error: 'access not authorized', code: 'ACCESS_DENIED' });
    }
  });

  it('still answers 404 to a registered key for a missing file', async () => {
    const keys = clientSuite(kem).generateKeyPair();
    registerClientKey(h, 'dev', 'alice', keys.publicKey);
    const res = await get(h, '/dev/missing.conf', headersFor(header, keys.publicKey));
    expect(res.status).toBe(404);
  });
});

describe('client key registry', () => {
  it('picks up a registration and a revocation without a restart', async () => {
    const keys = clientSuite('X25519').generateKeyPair();
    const headers = headersFor('X25519', keys.publicKey);
    expect((await get(h, '/dev/plain.txt', headers)).status).toBe(403);
    const path = registerClientKey(h, 'dev', 'bob', keys.publicKey);
    expect((await get(h, '/dev/plain.txt', headers)).status).toBe(200);
    rmSync(path);
    expect((await get(h, '/dev/plain.txt', headers)).status).toBe(403);
  });

  it('keeps nothing for the environment names clients make up: no entry, no log line each', async () => {
    const keys = clientSuite('X25519').generateKeyPair();
    const headers = headersFor('X25519', keys.publicKey);
    const names = Array.from({ length: 20 }, (_, i) => `made-up-${i}`);
    for (const env of names) expect((await get(h, `/${env}/app.conf`, headers)).status).toBe(403);
    // Before: one "client keys loaded" line (and one registry entry, for good) per name sent.
    expect(h.logs.filter((l) => l.msg === 'client keys loaded' && names.includes(l.env as string))).toEqual([]);
    // A folder created later for one of those names is read at once; removing it revokes (and says so once).
    const path = registerClientKey(h, 'made-up-3', 'carol', keys.publicKey);
    mkdirSync(join(h.storageDir, 'made-up-3'));
    writeFileSync(join(h.storageDir, 'made-up-3', 'app.conf'), 'made up\n');
    expect((await get(h, '/made-up-3/app.conf', headers)).status).toBe(200);
    rmSync(join(path, '..'), { recursive: true });
    expect((await get(h, '/made-up-3/app.conf', headers)).status).toBe(403);
    expect(h.logs.filter((l) => l.msg === 'client keys loaded' && l.env === 'made-up-3').map((l) => l.keys)).toEqual([
      [expect.objectContaining({ name: 'carol', kem: 'X25519' })],
      [],
    ]);
  });

  it('reads hex keys and comments, and skips a malformed file with a warning naming it', async () => {
    const good = clientSuite('X25519').generateKeyPair();
    registerClientKey(h, 'dev', 'placeholder', new Uint8Array(0));
    writeFileSync(join(h.config.clientKeysDir, 'dev', 'carol.pub'), `# carol's laptop\n${Buffer.from(good.publicKey).toString('hex')}\n`);
    writeFileSync(join(h.config.clientKeysDir, 'dev', 'broken.pub'), 'not a key at all');
    expect((await get(h, '/dev/plain.txt', headersFor('X25519', good.publicKey))).status).toBe(200);
    const warned = h.logs.filter((l) => l.msg === 'client key file ignored: not an X25519 or X-Wing public key').map((l) => l.file);
    expect(warned.sort()).toEqual(['broken.pub', 'placeholder.pub']);
    expect(JSON.stringify(h.logs)).not.toContain('not a key at all');
  });

  it('does not take a key registered as X25519 for another KEM name', async () => {
    const keys = clientSuite('X25519').generateKeyPair();
    registerClientKey(h, 'dev', 'alice', keys.publicKey);
    const res = await get(h, '/dev/plain.txt', headersFor('X-Wing', keys.publicKey));
    expect(res.status).toBe(400); // 32 bytes is the wrong length for X-Wing
  });
});

describe('400 on malformed recipient headers', () => {
  const x25519Key = Buffer.alloc(32, 7).toString('base64');
  it.each([
    ['the KEM is missing', { 'X-Client-Public-Key': x25519Key }, 'MISSING_PARAMETER', 'missing header: X-Client-Kem'],
    ['the key is missing', { 'X-Client-Kem': 'X25519' }, 'MISSING_PARAMETER', 'missing header: X-Client-Public-Key'],
    [
      'the KEM is unknown',
      { 'X-Client-Kem': 'P-256', 'X-Client-Public-Key': x25519Key },
      'INVALID_PARAMETER',
      'unknown KEM in X-Client-Kem',
    ],
    [
      'the key is not base64',
      { 'X-Client-Kem': 'X25519', 'X-Client-Public-Key': '***' },
      'INVALID_PARAMETER',
      'malformed X-Client-Public-Key',
    ],
    [
      'the key has the wrong length',
      { 'X-Client-Kem': 'X25519', 'X-Client-Public-Key': Buffer.alloc(31).toString('base64') },
      'INVALID_PARAMETER',
      'wrong key length in X-Client-Public-Key',
    ],
  ])('answers 400 when %s, saying which, and nothing about the file', async (_what, headers, code, message) => {
    for (const path of ['/dev/app.conf', '/dev/missing.conf']) {
      const res = await get(h, path, headers);
      expect(res.status).toBe(400);
      const body = res.json();
      expect(body).toMatchObject({ code, error: message });
      expect(res.text).not.toMatch(/app\.conf|missing\.conf|dev\//);
    }
  });

  it('says how long the key should be', async () => {
    const res = await get(h, '/dev/app.conf', { 'X-Client-Kem': 'X-Wing', 'X-Client-Public-Key': Buffer.alloc(32).toString('base64') });
    expect(res.json()).toMatchObject({ details: 'X-Wing public keys are 1216 bytes, got 32' });
  });
});

describe('pre-shared-key mode', () => {
  it('stays psk, byte-compatible, without the recipient headers', async () => {
    const res = await get(h, '/dev/plain.txt');
    expect(res.headers['x-encryption-mode']).toBe('psk');
    expect(res.headers['x-hpke-suite']).toBeUndefined();
    expect(Buffer.from(res.text, 'base64').length).toBe(12 + 'no placeholders here\n'.length + 16);
  });
});
