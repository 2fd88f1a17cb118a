import type { AeadBackend } from './cipher';
import { assertBytes, concatBytes } from './bytes';
import { KEY_LENGTH, NONCE_LENGTH, TAG_LENGTH } from './constants';
import { createHpkeKem, type HpkeKem, type HpkeKemName, type HpkeKeyPair } from './hpke-kem';
import { labeledExpand, labeledExtract, suiteIdHpke } from './hpke-labels';
import type { X25519Backend } from './x25519';

/** HPKE KDF id of HKDF-SHA256 (RFC 9180 section 7.2). */
export const HPKE_KDF_HKDF_SHA256 = 0x0001;
/** HPKE AEAD id of ChaCha20Poly1305 (RFC 9180 section 7.3). */
export const HPKE_AEAD_CHACHA20POLY1305 = 0x0003;
/** Base mode (RFC 9180 section 5): no PSK, no sender authentication. */
const MODE_BASE = 0x00;

/** Options of {@link HpkeSuite.seal}. */
export interface HpkeSealOptions {
  /** `info`, bound into the key schedule (default empty). */
  info?: Uint8Array;
  /** Associated data of the AEAD (default empty). */
  aad?: Uint8Array;
  /** Fixed encapsulation randomness, for test vectors only (X25519: ikmE; X-Wing: 64-byte eseed). */
  encapSeed?: Uint8Array;
}

/** Options of {@link HpkeSuite.open}. */
export interface HpkeOpenOptions {
  info?: Uint8Array;
  aad?: Uint8Array;
}

/** The values of the key schedule (RFC 9180 section 5.1), exposed for the RFC vectors. */
export interface HpkeKeySchedule {
  keyScheduleContext: Uint8Array;
  secret: Uint8Array;
  key: Uint8Array;
  baseNonce: Uint8Array;
  exporterSecret: Uint8Array;
}

/**
 * One HPKE ciphersuite, base mode, single-shot (RFC 9180 section 6.1): a KEM, HKDF-SHA256 and
 * ChaCha20-Poly1305. The wire form of a sealed message is `enc || ciphertext || tag`.
 */
export interface HpkeSuite {
  readonly kem: HpkeKem;
  /** `DHKEM-X25519-HKDF-SHA256/HKDF-SHA256/ChaCha20Poly1305` or `X-Wing/HKDF-SHA256/ChaCha20Poly1305`. */
  readonly name: string;
  /** kem_id, kdf_id, aead_id. */
  readonly ids: { kem: number; kdf: number; aead: number };
  generateKeyPair(): HpkeKeyPair;
  /** Seal(pkR, info, aad, pt): the encapsulated key and `ciphertext || tag`. Throws Error('invalid public key'). */
  seal(publicKey: Uint8Array, plaintext: Uint8Array, options?: HpkeSealOptions): { enc: Uint8Array; ciphertext: Uint8Array };
  /** Open(enc, skR, info, aad, ct); throws Error('invalid tag') whenever it does not open. */
  open(privateKey: Uint8Array, enc: Uint8Array, ciphertext: Uint8Array, options?: HpkeOpenOptions): Uint8Array;
  /** {@link seal} as one buffer: `enc || ciphertext || tag`. */
  sealToBytes(publicKey: Uint8Array, plaintext: Uint8Array, options?: HpkeSealOptions): Uint8Array;
  /** Opens what {@link sealToBytes} made; throws Error('invalid tag') for anything else. */
  openBytes(privateKey: Uint8Array, sealed: Uint8Array, options?: HpkeOpenOptions): Uint8Array;
  /** KeySchedule of base mode for a KEM shared secret (for test vectors). */
  keySchedule(sharedSecret: Uint8Array, info: Uint8Array): HpkeKeySchedule;
  /** The nonce of message `sequence` (RFC 9180 section 5.2: base_nonce XOR I2OSP(seq, Nn)). */
  nonce(baseNonce: Uint8Array, sequence: number): Uint8Array;
  /** Secret export (RFC 9180 section 5.3): LabeledExpand(exporter_secret, "sec", context, L). */
  exportSecret(exporterSecret: Uint8Array, context: Uint8Array, length: number): Uint8Array;
}

/** Options of {@link createHpkeSuite}: which implementations do the arithmetic. */
export interface HpkeSuiteOptions {
  x25519: X25519Backend;
  aead: AeadBackend;
}

const EMPTY = new Uint8Array(0);

/**
 * Creates the suite of `kem` with HKDF-SHA256 and ChaCha20-Poly1305. `kem` is `X25519`
 * (DHKEM(X25519, HKDF-SHA256), 0x0020) or `X-Wing` (0x647a); throws a TypeError otherwise.
 */
export function createHpkeSuite(kemName: HpkeKemName, options: HpkeSuiteOptions): HpkeSuite {
  const kem = createHpkeKem(kemName, options.x25519);
  const { aead } = options;
  const suiteId = suiteIdHpke(kem.id, HPKE_KDF_HKDF_SHA256, HPKE_AEAD_CHACHA20POLY1305);
  const name = `${kem.name === 'X25519' ? 'DHKEM-X25519-HKDF-SHA256' : 'X-Wing'}/HKDF-SHA256/ChaCha20Poly1305`;

  function keySchedule(sharedSecret: Uint8Array, info: Uint8Array): HpkeKeySchedule {
    const pskIdHash = labeledExtract(suiteId, EMPTY, 'psk_id_hash', EMPTY);
    const infoHash = labeledExtract(suiteId, EMPTY, 'info_hash', info);
    const keyScheduleContext = concatBytes(new Uint8Array([MODE_BASE]), pskIdHash, infoHash);
    const secret = labeledExtract(suiteId, sharedSecret, 'secret', EMPTY);
    return {
      keyScheduleContext,
      secret,
      key: labeledExpand(suiteId, secret, 'key', keyScheduleContext, KEY_LENGTH),
      baseNonce: labeledExpand(suiteId, secret, 'base_nonce', keyScheduleContext, NONCE_LENGTH),
      exporterSecret: labeledExpand(suiteId, secret, 'exp', keyScheduleContext, 32),
    };
  }

  const suite: HpkeSuite = {
    kem,
    name,
    ids: { kem: kem.id, kdf: HPKE_KDF_HKDF_SHA256, aead: HPKE_AEAD_CHACHA20POLY1305 },
    generateKeyPair: () => kem.generateKeyPair(),
    seal(publicKey, plaintext, opts = {}) {
      assertBytes(plaintext, 'plaintext');
      const { sharedSecret, enc } = kem.encap(publicKey, opts.encapSeed);
      const { key, baseNonce } = keySchedule(sharedSecret, opts.info ?? EMPTY);
      // Single-shot: one message, sequence number 0, so the nonce is base_nonce itself.
      return { enc, ciphertext: aead.encrypt(key, baseNonce, plaintext, opts.aad ?? EMPTY) };
    },
    open(privateKey, enc, ciphertext, opts = {}) {
      assertBytes(ciphertext, 'ciphertext');
      if (ciphertext.length < TAG_LENGTH) throw new Error('invalid tag');
      const sharedSecret = kem.decap(enc, privateKey);
      const { key, baseNonce } = keySchedule(sharedSecret, opts.info ?? EMPTY);
      return aead.decrypt(key, baseNonce, ciphertext, opts.aad ?? EMPTY);
    },
    sealToBytes(publicKey, plaintext, opts) {
      const { enc, ciphertext } = suite.seal(publicKey, plaintext, opts);
      return concatBytes(enc, ciphertext);
    },
    openBytes(privateKey, sealed, opts) {
      assertBytes(sealed, 'sealed');
      const n = kem.lengths.enc;
      if (sealed.length < n + TAG_LENGTH) throw new Error('invalid tag');
      return suite.open(privateKey, sealed.subarray(0, n), sealed.subarray(n), opts);
    },
    keySchedule,
    nonce(baseNonce, sequence) {
      assertBytes(baseNonce, 'baseNonce', NONCE_LENGTH);
      if (!Number.isSafeInteger(sequence) || sequence < 0) throw new RangeError('"sequence" expected a non-negative integer');
      const out = Uint8Array.from(baseNonce);
      for (let i = NONCE_LENGTH - 1, s = sequence; i >= 0 && s > 0; i--, s = Math.floor(s / 256)) out[i]! ^= s % 256;
      return out;
    },
    exportSecret(exporterSecret, context, length) {
      return labeledExpand(suiteId, exporterSecret, 'sec', context, length);
    },
  };
  return suite;
}
