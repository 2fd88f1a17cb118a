import { CipherSuite, HkdfSha256 } from '@hpke/core';
import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { DhkemX25519HkdfSha256 } from '@hpke/dhkem-x25519';
import { XWing } from '@hpke/hybridkem-x-wing';
import { ml_kem768_x25519 } from '@noble/post-quantum/hybrid.js';
import rfc7748 from './vectors/rfc7748-x25519.json';
import rfc9180 from './vectors/rfc9180-x25519-chacha20poly1305-base.json';
import xwingVectors from './vectors/xwing-draft.json';
import {
  bytesToHex,
  createHpkeSuite,
  equalBytes,
  hexToBytes,
  nobleBackend,
  nobleX25519,
  nodeBackend,
  nodeX25519,
  type HpkeKemName,
  type X25519Backend,
} from '../src';
import * as portable from '../src/portable';

const X25519_BACKENDS: X25519Backend[] = [nodeX25519, nobleX25519];
const hex = hexToBytes;
const text = (s: string) => new TextEncoder().encode(s);

describe.each(X25519_BACKENDS.map((b) => [b.name, b] as const))('X25519, %s', (_name, x25519) => {
  it.each(rfc7748.scalarMult.map((v, i) => [i + 1, v] as const))('matches RFC 7748 section 5.2 vector %d', (_i, v) => {
    expect(bytesToHex(x25519.scalarMult(hex(v.scalar), hex(v.u)))).toBe(v.output);
  });

  it('matches the RFC 7748 section 6.1 exchange', () => {
    const d = rfc7748.diffieHellman;
    expect(bytesToHex(x25519.scalarMultBase(hex(d.alicePrivate)))).toBe(d.alicePublic);
    expect(bytesToHex(x25519.scalarMultBase(hex(d.bobPrivate)))).toBe(d.bobPublic);
    expect(bytesToHex(x25519.scalarMult(hex(d.alicePrivate), hex(d.bobPublic)))).toBe(d.shared);
    expect(bytesToHex(x25519.scalarMult(hex(d.bobPrivate), hex(d.alicePublic)))).toBe(d.shared);
  });

  it('refuses low-order points (all-zero output) with one message', () => {
    const scalar = hex(rfc7748.diffieHellman.alicePrivate);
    for (const u of [new Uint8Array(32), Uint8Array.from([1, ...new Array<number>(31).fill(0)])]) {
      expect(() => x25519.scalarMult(scalar, u)).toThrow(/^invalid X25519 key$/);
    }
  });

  it('names the argument of the wrong length', () => {
    expect(() => x25519.scalarMult(new Uint8Array(31), new Uint8Array(32))).toThrow(
      '"scalar" expected Uint8Array of length 32, got length=31',
    );
    expect(() => x25519.scalarMult(new Uint8Array(32), new Uint8Array(33))).toThrow('"u" expected Uint8Array of length 32, got length=33');
  });
});

describe('X25519 backends', () => {
  it('agree on random scalars and points', () => {
    for (let i = 0; i < 20; i++) {
      const a = crypto.getRandomValues(new Uint8Array(32));
      const u = crypto.getRandomValues(new Uint8Array(32));
      expect(bytesToHex(nodeX25519.scalarMultBase(a))).toBe(bytesToHex(nobleX25519.scalarMultBase(a)));
      expect(bytesToHex(nodeX25519.scalarMult(a, u))).toBe(bytesToHex(nobleX25519.scalarMult(a, u)));
    }
  });
});

describe.each(X25519_BACKENDS.map((b) => [b.name, b] as const))('HPKE RFC 9180 A.2.1 (X25519 on %s)', (_name, x25519) => {
  const v = rfc9180;
  const suite = createHpkeSuite('X25519', { x25519, aead: x25519 === nodeX25519 ? nodeBackend : nobleBackend });

  it('names the suite by its RFC 9180 identifiers', () => {
    expect(suite.ids).toEqual({ kem: v.kem_id, kdf: v.kdf_id, aead: v.aead_id });
  });

  it('derives the sender and recipient key pairs', () => {
    const e = suite.kem.deriveKeyPair(hex(v.ikmE));
    const r = suite.kem.deriveKeyPair(hex(v.ikmR));
    expect([bytesToHex(e.privateKey), bytesToHex(e.publicKey)]).toEqual([v.skEm, v.pkEm]);
    expect([bytesToHex(r.privateKey), bytesToHex(r.publicKey)]).toEqual([v.skRm, v.pkRm]);
  });

  it('encapsulates and decapsulates the shared secret', () => {
    const { enc, sharedSecret } = suite.kem.encap(hex(v.pkRm), hex(v.ikmE));
    expect(bytesToHex(enc)).toBe(v.enc);
    expect(bytesToHex(sharedSecret)).toBe(v.shared_secret);
    expect(bytesToHex(suite.kem.decap(hex(v.enc), hex(v.skRm)))).toBe(v.shared_secret);
  });

  it('runs the key schedule', () => {
    const ks = suite.keySchedule(hex(v.shared_secret), hex(v.info));
    expect(bytesToHex(ks.keyScheduleContext)).toBe(v.key_schedule_context);
    expect(bytesToHex(ks.secret)).toBe(v.secret);
    expect(bytesToHex(ks.key)).toBe(v.key);
    expect(bytesToHex(ks.baseNonce)).toBe(v.base_nonce);
    expect(bytesToHex(ks.exporterSecret)).toBe(v.exporter_secret);
    for (const x of v.exports) {
      expect(bytesToHex(suite.exportSecret(ks.exporterSecret, hex(x.exporter_context), x.L))).toBe(x.exported_value);
    }
  });

  it('seals and opens the single-shot message (sequence 0)', () => {
    const first = v.encryptions[0]!;
    const opts = { info: hex(v.info), aad: hex(first.aad) };
    const { enc, ciphertext } = suite.seal(hex(v.pkRm), hex(first.pt), { ...opts, encapSeed: hex(v.ikmE) });
    expect(bytesToHex(enc)).toBe(v.enc);
    expect(bytesToHex(ciphertext)).toBe(first.ct);
    expect(bytesToHex(suite.open(hex(v.skRm), hex(v.enc), hex(first.ct), opts))).toBe(first.pt);
  });

  it.each(v.encryptions.map((e) => [e.sequence_number, e] as const))('derives the nonce and ciphertext of sequence %d', (seq, e) => {
    const ks = suite.keySchedule(hex(v.shared_secret), hex(v.info));
    const nonce = suite.nonce(ks.baseNonce, seq);
    expect(bytesToHex(nonce)).toBe(e.nonce);
    expect(bytesToHex(nodeBackend.encrypt(ks.key, nonce, hex(e.pt), hex(e.aad)))).toBe(e.ct);
  });
});

describe('X-Wing, draft vectors', () => {
  const vectors = xwingVectors.vectors.map((v, i) => [i + 1, v] as const);

  it.each(vectors)("@noble/post-quantum's ml_kem768_x25519 matches vector %d", (_i, v) => {
    const { publicKey } = ml_kem768_x25519.keygen(hex(v.seed));
    expect(bytesToHex(publicKey)).toBe(v.pk);
    const { cipherText, sharedSecret } = ml_kem768_x25519.encapsulate(publicKey, hex(v.eseed));
    expect([bytesToHex(cipherText), bytesToHex(sharedSecret)]).toEqual([v.ct, v.ss]);
  });

  describe.each(X25519_BACKENDS.map((b) => [b.name, b] as const))('on the %s X25519', (_name, x25519) => {
    const kem = createHpkeSuite('X-Wing', { x25519, aead: nodeBackend }).kem;

    it.each(vectors)('derives the public key of vector %d', (_i, v) => {
      expect(bytesToHex(kem.publicKeyOf(hex(v.seed)))).toBe(v.pk);
    });

    it.each(vectors)('encapsulates and decapsulates vector %d', (_i, v) => {
      const { enc, sharedSecret } = kem.encap(hex(v.pk), hex(v.eseed));
      expect(bytesToHex(enc)).toBe(v.ct);
      expect(bytesToHex(sharedSecret)).toBe(v.ss);
      expect(bytesToHex(kem.decap(hex(v.ct), hex(v.seed)))).toBe(v.ss);
    });
  });

  it('derives an HPKE key pair as SHAKE256(ikm, 32) (draft section 5.6)', () => {
    const kem = createHpkeSuite('X-Wing', { x25519: nodeX25519, aead: nodeBackend }).kem;
    const a = kem.deriveKeyPair(text('ikm'));
    expect(a.privateKey.length).toBe(32);
    expect(equalBytes(a.publicKey, kem.publicKeyOf(a.privateKey))).toBe(true);
    expect(equalBytes(kem.deriveKeyPair(text('ikm')).privateKey, a.privateKey)).toBe(true);
  });
});

const KEMS: HpkeKemName[] = ['X25519', 'X-Wing'];

describe.each(KEMS)('HPKE %s suite', (kemName) => {
  const fast = createHpkeSuite(kemName, { x25519: nodeX25519, aead: nodeBackend });
  const pure = portable.createHpkeSuite(kemName, { x25519: portable.nobleX25519, aead: portable.nobleBackend });
  const info = text('config-server/v1/file/dev/app.conf');

  it('opens on the portable build what the node build sealed, and back', () => {
    const keys = fast.generateKeyPair();
    const data = text('url=postgres://db\n');
    expect(equalBytes(pure.openBytes(keys.privateKey, fast.sealToBytes(keys.publicKey, data, { info }), { info }), data)).toBe(true);
    expect(equalBytes(fast.openBytes(keys.privateKey, pure.sealToBytes(keys.publicKey, data, { info }), { info }), data)).toBe(true);
  });

  it('lays a sealed message out as enc || ciphertext || tag', () => {
    const keys = fast.generateKeyPair();
    const sealed = fast.sealToBytes(keys.publicKey, new Uint8Array(100));
    expect(sealed.length).toBe(fast.kem.lengths.enc + 100 + 16);
  });

  it('refuses a flipped bit, another key, another info, a truncation with a bare "invalid tag"', () => {
    const keys = fast.generateKeyPair();
    const sealed = fast.sealToBytes(keys.publicKey, text('secret'), { info });
    for (const i of [0, fast.kem.lengths.enc - 1, fast.kem.lengths.enc, sealed.length - 1]) {
      const tampered = sealed.slice();
      tampered[i]! ^= 1;
      expect(() => fast.openBytes(keys.privateKey, tampered, { info })).toThrow(/^invalid tag$/);
    }
    expect(() => fast.openBytes(fast.generateKeyPair().privateKey, sealed, { info })).toThrow(/^invalid tag$/);
    expect(() => fast.openBytes(keys.privateKey, sealed, { info: text('other') })).toThrow(/^invalid tag$/);
    expect(() => fast.openBytes(keys.privateKey, sealed.subarray(0, fast.kem.lengths.enc + 15), { info })).toThrow(/^invalid tag$/);
  });

  it('refuses a public key of the wrong length, naming it', () => {
    const n = fast.kem.lengths.publicKey;
    expect(() => fast.seal(new Uint8Array(n - 1), text('x'))).toThrow(
      `"publicKey" expected Uint8Array of length ${n}, got length=${n - 1}`,
    );
  });

  it('uses fresh randomness for each message', () => {
    const keys = fast.generateKeyPair();
    expect(bytesToHex(fast.sealToBytes(keys.publicKey, text('x')))).not.toBe(bytesToHex(fast.sealToBytes(keys.publicKey, text('x'))));
  });
});

describe('HPKE cross-implementation with @hpke/*', () => {
  const info = text('cross-test info');
  const data = text('sealed by one implementation, opened by the other\n');

  function hpkeJs(kemName: HpkeKemName): CipherSuite {
    return new CipherSuite({
      kem: kemName === 'X25519' ? new DhkemX25519HkdfSha256() : new XWing(),
      kdf: new HkdfSha256(),
      aead: new Chacha20Poly1305(),
    });
  }

  describe.each(KEMS)('%s', (kemName) => {
    const ours = createHpkeSuite(kemName, { x25519: nodeX25519, aead: nodeBackend });
    const theirs = hpkeJs(kemName);

    it('opens with @hpke what we sealed', async () => {
      const keys = ours.generateKeyPair();
      const { enc, ciphertext } = ours.seal(keys.publicKey, data, { info });
      const recipientKey = await theirs.kem.deserializePrivateKey(keys.privateKey);
      const opened = await theirs.open({ recipientKey, enc, info }, ciphertext);
      expect(equalBytes(new Uint8Array(opened), data)).toBe(true);
    });

    it('opens what @hpke sealed', async () => {
      const pair = await theirs.kem.generateKeyPair();
      const publicKey = new Uint8Array(await theirs.kem.serializePublicKey(pair.publicKey));
      const privateKey = new Uint8Array(await theirs.kem.serializePrivateKey(pair.privateKey));
      expect(equalBytes(ours.kem.publicKeyOf(privateKey), publicKey)).toBe(true);
      const sealed = await theirs.seal({ recipientPublicKey: pair.publicKey, info }, data);
      const opened = ours.open(privateKey, new Uint8Array(sealed.enc), new Uint8Array(sealed.ct), { info });
      expect(equalBytes(opened, data)).toBe(true);
    });

    it('derives the same key pair from the same ikm', async () => {
      const ikm = text('0123456789abcdef0123456789abcdef');
      const pair = await theirs.kem.deriveKeyPair(ikm);
      const ourPair = ours.kem.deriveKeyPair(ikm);
      expect(bytesToHex(new Uint8Array(await theirs.kem.serializePrivateKey(pair.privateKey)))).toBe(bytesToHex(ourPair.privateKey));
      expect(bytesToHex(new Uint8Array(await theirs.kem.serializePublicKey(pair.publicKey)))).toBe(bytesToHex(ourPair.publicKey));
    });
  });
});
