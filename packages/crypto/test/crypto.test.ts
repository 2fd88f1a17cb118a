import vectors from './vectors/rfc8439-aead.json';
import {
  base64ToBytes,
  bytesToHex,
  deriveKey,
  equalBytes,
  generateKey,
  hexToBytes,
  keyFingerprint,
  nobleBackend,
  nodeBackend,
  open,
  openFromBase64,
  normalizeSha256Fingerprint,
  parseKey,
  randomNonce,
  seal,
  sealToBase64,
  type AeadBackend,
} from '../src';
import * as portable from '../src/portable';

const BACKENDS: AeadBackend[] = [nodeBackend, nobleBackend];

describe.each(BACKENDS.map((b) => [b.name, b] as const))('%s backend', (_name, backend) => {
  it.each(vectors.vectors.map((v) => [v.name, v] as const))('matches RFC 8439 %s', (_n, v) => {
    const key = hexToBytes(v.key);
    const nonce = hexToBytes(v.nonce);
    const aad = hexToBytes(v.aad);
    const sealed = backend.encrypt(key, nonce, hexToBytes(v.plaintext), aad);
    expect(bytesToHex(sealed)).toBe(v.ciphertext + v.tag);
    expect(bytesToHex(backend.decrypt(key, nonce, sealed, aad))).toBe(v.plaintext);
  });

  it('refuses a flipped bit anywhere with a bare "invalid tag"', () => {
    const key = generateKey();
    const envelope = seal(key, new TextEncoder().encode('hello'), { backend });
    for (let i = 0; i < envelope.length; i++) {
      const tampered = envelope.slice();
      tampered[i]! ^= 1;
      expect(() => open(key, tampered, { backend })).toThrow(/^invalid tag$/);
    }
  });

  it('refuses the wrong key and a truncated envelope', () => {
    const envelope = seal(generateKey(), new Uint8Array([1, 2, 3]), { backend });
    expect(() => open(generateKey(), envelope, { backend })).toThrow('invalid tag');
    expect(() => open(generateKey(), envelope.subarray(0, 27), { backend })).toThrow('invalid tag');
  });

  it('names the argument of the wrong length', () => {
    expect(() => backend.encrypt(new Uint8Array(16), new Uint8Array(12), new Uint8Array(1))).toThrow(
      '"key" expected Uint8Array of length 32, got length=16',
    );
    expect(() => backend.encrypt(new Uint8Array(32), new Uint8Array(8), new Uint8Array(1))).toThrow(
      '"nonce" expected Uint8Array of length 12, got length=8',
    );
  });
});

describe('envelope', () => {
  it('lays out nonce || ciphertext || tag', () => {
    const key = generateKey();
    const nonce = hexToBytes('000102030405060708090a0b');
    const envelope = seal(key, new Uint8Array(100), { backend: nodeBackend, nonce });
    expect(envelope.length).toBe(12 + 100 + 16);
    expect(bytesToHex(envelope.subarray(0, 12))).toBe('000102030405060708090a0b');
  });

  it('gives byte-identical output on both backends for every size', () => {
    const key = generateKey();
    const nonce = generateKey().subarray(0, 12);
    for (const size of [0, 1, 63, 64, 65, 1024, 65536 + 7, 1 << 20]) {
      const data = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
      const a = seal(key, data, { backend: nodeBackend, nonce });
      const b = seal(key, data, { backend: nobleBackend, nonce });
      expect(equalBytes(a, b)).toBe(true);
      expect(equalBytes(open(key, a, { backend: nobleBackend }), data)).toBe(true);
      expect(equalBytes(open(key, b, { backend: nodeBackend }), data)).toBe(true);
    }
  });

  it('draws distinct random nonces across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) seen.add(bytesToHex(randomNonce()));
    expect(seen.size).toBe(1000);
    expect(randomNonce()).toHaveLength(12);
  });

  it('uses a fresh nonce each time', () => {
    const key = generateKey();
    const data = new Uint8Array(10);
    expect(sealToBase64(key, data, { backend: nodeBackend })).not.toBe(sealToBase64(key, data, { backend: nodeBackend }));
  });

  it('round-trips through base64 and refuses bad base64', () => {
    const key = generateKey();
    const text = sealToBase64(key, new TextEncoder().encode('a=b'), { backend: nodeBackend });
    expect(new TextDecoder().decode(openFromBase64(key, text, { backend: nobleBackend }))).toBe('a=b');
    expect(() => openFromBase64(key, '***', { backend: nodeBackend })).toThrow(TypeError);
  });

  it('opens with the portable entry point what the node backend sealed', () => {
    const key = generateKey();
    const envelope = seal(key, new TextEncoder().encode('portable'), { backend: nodeBackend });
    expect(new TextDecoder().decode(portable.open(key, envelope, { backend: portable.nobleBackend }))).toBe('portable');
  });
});

describe('keys', () => {
  it('parses 64 hex characters with surrounding white space', () => {
    expect(parseKey(` ${'ab'.repeat(32)}\n`)).toEqual(new Uint8Array(32).fill(0xab));
  });

  it('refuses anything else without echoing the value', () => {
    expect(() => parseKey('secretsecret', 'CONFIG_MASTER_KEY')).toThrow('"CONFIG_MASTER_KEY" expected 64 hex characters, got length=12');
    expect(() => parseKey('zz'.repeat(32))).toThrow(TypeError);
  });

  it('derives distinct, stable keys per info string (RFC 5869 test case 3 checks HKDF)', () => {
    // RFC 5869 A.3: IKM = 22 bytes of 0x0b, no salt, no info, L = 42.
    const okm = deriveKey(new Uint8Array(22).fill(0x0b), '', { length: 42 });
    expect(bytesToHex(okm)).toBe('8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8');
    const master = generateKey();
    expect(equalBytes(deriveKey(master, 'env:dev'), deriveKey(master, 'env:dev'))).toBe(true);
    expect(equalBytes(deriveKey(master, 'env:dev'), deriveKey(master, 'env:prod'))).toBe(false);
  });

  it('fingerprints without revealing the key', () => {
    const key = generateKey();
    expect(keyFingerprint(key)).toMatch(/^[0-9a-f]{16}$/);
    expect(bytesToHex(key)).not.toContain(keyFingerprint(key));
  });
});

describe('normalizeSha256Fingerprint', () => {
  it('accepts plain hex or colons in any case and gives the AB:CD:… form', () => {
    const colons = Array.from({ length: 32 }, (_, i) => (i * 7).toString(16).padStart(2, '0').toUpperCase()).join(':');
    expect(normalizeSha256Fingerprint(colons.replace(/:/g, '').toLowerCase())).toBe(colons);
    expect(normalizeSha256Fingerprint(` ${colons.toLowerCase()}\n`)).toBe(colons);
  });

  it('refuses anything but 32 bytes of hex', () => {
    expect(normalizeSha256Fingerprint('AB'.repeat(31))).toBeUndefined();
    expect(normalizeSha256Fingerprint('ZZ'.repeat(32))).toBeUndefined();
  });
});

describe('base64ToBytes', () => {
  it('ignores white space and refuses other characters', () => {
    expect(base64ToBytes('aGVs\nbG8=')).toEqual(new TextEncoder().encode('hello'));
    expect(() => base64ToBytes('aGVsbG8')).toThrow(TypeError);
  });
});
