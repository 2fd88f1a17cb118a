import { randomBytes } from '@noble/ciphers/utils.js';
import { x25519 as nobleCurve } from '@noble/curves/ed25519.js';
import { sha3_256, shake256 } from '@noble/hashes/sha3.js';
import { combineKEMS, expandSeedXof, _ecdhKem, ml_kem768_x25519 } from '@noble/post-quantum/hybrid.js';
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js';
import { assertBytes, concatBytes } from './bytes';
import { labeledExpand, labeledExtract, suiteIdKem } from './hpke-labels';
import { X25519_KEY_LENGTH, type X25519Backend } from './x25519';

/** The KEMs of the recipient mode, by the names clients send (`X-Client-Kem`). */
export type HpkeKemName = 'X25519' | 'X-Wing';

/** HPKE KEM identifiers (RFC 9180 section 7.1; X-Wing draft, "IANA Considerations"). */
export const HPKE_KEM_IDS: Readonly<Record<HpkeKemName, number>> = { X25519: 0x0020, 'X-Wing': 0x647a };

/** A key pair of a KEM: the private key as HPKE serialises it (X25519 scalar, X-Wing 32-byte seed). */
export interface HpkeKeyPair {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

/**
 * A KEM with the interface of RFC 9180 section 4 (base mode only: no AuthEncap). Sizes in bytes;
 * `encap` throws Error('invalid public key') for a key it cannot encapsulate to, `decap`
 * Error('invalid tag') for anything that does not decapsulate (the caller reports one failure).
 */
export interface HpkeKem {
  readonly name: HpkeKemName;
  readonly id: number;
  /** Nsecret, Nenc, Npk, Nsk. */
  readonly lengths: { sharedSecret: number; enc: number; publicKey: number; privateKey: number };
  generateKeyPair(): HpkeKeyPair;
  /** DeriveKeyPair(ikm) of RFC 9180 section 7.1.3 (X25519) or the X-Wing draft section 5.6. */
  deriveKeyPair(ikm: Uint8Array): HpkeKeyPair;
  /** The public key of a private key. */
  publicKeyOf(privateKey: Uint8Array): Uint8Array;
  /** Encap(pkR); `seed` fixes the randomness for test vectors (X25519: ikmE; X-Wing: 64-byte eseed). */
  encap(publicKey: Uint8Array, seed?: Uint8Array): { sharedSecret: Uint8Array; enc: Uint8Array };
  decap(enc: Uint8Array, privateKey: Uint8Array): Uint8Array;
}

function invalidPublicKey(): Error {
  return new Error('invalid public key');
}

/** DHKEM(X25519, HKDF-SHA256), RFC 9180 section 4.1, on the given X25519 implementation. */
export function createDhkemX25519(x25519: X25519Backend): HpkeKem {
  const suiteId = suiteIdKem(HPKE_KEM_IDS.X25519);
  const N = X25519_KEY_LENGTH;

  function deriveKeyPair(ikm: Uint8Array): HpkeKeyPair {
    assertBytes(ikm, 'ikm');
    const dkpPrk = labeledExtract(suiteId, new Uint8Array(0), 'dkp_prk', ikm);
    const privateKey = labeledExpand(suiteId, dkpPrk, 'sk', new Uint8Array(0), N);
    return { privateKey, publicKey: x25519.scalarMultBase(privateKey) };
  }

  function extractAndExpand(dh: Uint8Array, kemContext: Uint8Array): Uint8Array {
    const eaePrk = labeledExtract(suiteId, new Uint8Array(0), 'eae_prk', dh);
    return labeledExpand(suiteId, eaePrk, 'shared_secret', kemContext, N);
  }

  return {
    name: 'X25519',
    id: HPKE_KEM_IDS.X25519,
    lengths: { sharedSecret: N, enc: N, publicKey: N, privateKey: N },
    generateKeyPair() {
      // Any 32 bytes are a valid X25519 private key (RFC 7748 clamps them when used).
      const privateKey = randomBytes(N);
      return { privateKey, publicKey: x25519.scalarMultBase(privateKey) };
    },
    deriveKeyPair,
    publicKeyOf(privateKey) {
      assertBytes(privateKey, 'privateKey', N);
      return x25519.scalarMultBase(privateKey);
    },
    encap(publicKey, seed) {
      assertBytes(publicKey, 'publicKey', N);
      const ephemeral = seed === undefined ? this.generateKeyPair() : deriveKeyPair(seed);
      let dh: Uint8Array;
      try {
        dh = x25519.scalarMult(ephemeral.privateKey, publicKey);
      } catch {
        throw invalidPublicKey(); // low-order key: RFC 9180 section 7.1.4 aborts
      }
      const enc = ephemeral.publicKey;
      return { sharedSecret: extractAndExpand(dh, concatBytes(enc, publicKey)), enc };
    },
    decap(enc, privateKey) {
      assertBytes(privateKey, 'privateKey', N);
      if (!(enc instanceof Uint8Array) || enc.length !== N) throw new Error('invalid tag');
      let dh: Uint8Array;
      try {
        dh = x25519.scalarMult(privateKey, enc);
      } catch {
        throw new Error('invalid tag');
      }
      return extractAndExpand(dh, concatBytes(enc, x25519.scalarMultBase(privateKey)));
    },
  };
}

// X-Wing: the draft's construction as @noble/post-quantum composes it for `ml_kem768_x25519`
// (SHAKE256 seed expansion to ML-KEM-768 d || z and the X25519 key; combiner
// SHA3-256(ss_M || ss_X || ct_X || pk_X || XWingLabel)), with only the X25519 arithmetic swapped.
const XWING_LABEL = new Uint8Array([0x5c, 0x2e, 0x2f, 0x2f, 0x5e, 0x5c]); // "\./" "/^\"
const XWING_LENGTHS = { sharedSecret: 32, enc: 1120, publicKey: 1216, privateKey: 32 } as const;

type NobleKem = typeof ml_kem768_x25519;

function xwingOnX25519(x25519: X25519Backend): NobleKem {
  if (x25519.name === 'noble') return ml_kem768_x25519;
  // The shape @noble/post-quantum's _ecdhKem expects of a Montgomery curve.
  const curve = {
    lengths: nobleCurve.lengths,
    keygen(seed: Uint8Array = randomBytes(X25519_KEY_LENGTH)) {
      const secretKey = Uint8Array.from(seed);
      return { secretKey, publicKey: x25519.scalarMultBase(secretKey) };
    },
    getPublicKey: (secretKey: Uint8Array) => x25519.scalarMultBase(secretKey),
    getSharedSecret: (secretKey: Uint8Array, publicKey: Uint8Array) => x25519.scalarMult(secretKey, publicKey),
  };
  return combineKEMS(
    32,
    32,
    expandSeedXof(shake256),
    (pk: Uint8Array[], ct: Uint8Array[], ss: Uint8Array[]) => sha3_256(concatBytes(ss[0]!, ss[1]!, ct[1]!, pk[1]!, XWING_LABEL)),
    ml_kem768,
    _ecdhKem(curve as unknown as Parameters<typeof _ecdhKem>[0]),
  );
}

/**
 * X-Wing (draft-connolly-cfrg-xwing-kem: ML-KEM-768 + X25519) as an HPKE KEM (draft section
 * 5.6). With the noble X25519 it is `ml_kem768_x25519` of @noble/post-quantum as is; with
 * another X25519 the same composition runs on it.
 */
export function createXWing(x25519: X25519Backend): HpkeKem {
  const kem = xwingOnX25519(x25519);
  const L = XWING_LENGTHS;
  const keyPair = (seed: Uint8Array): HpkeKeyPair => {
    const { secretKey, publicKey } = kem.keygen(seed);
    return { privateKey: secretKey, publicKey };
  };
  return {
    name: 'X-Wing',
    id: HPKE_KEM_IDS['X-Wing'],
    lengths: L,
    generateKeyPair: () => keyPair(randomBytes(L.privateKey)),
    // Draft section 5.6: sk = SHAKE256(ikm, 32 bytes).
    deriveKeyPair(ikm) {
      assertBytes(ikm, 'ikm');
      return keyPair(shake256(ikm, { dkLen: L.privateKey }));
    },
    publicKeyOf(privateKey) {
      assertBytes(privateKey, 'privateKey', L.privateKey);
      return kem.getPublicKey(privateKey);
    },
    encap(publicKey, seed) {
      assertBytes(publicKey, 'publicKey', L.publicKey);
      if (seed !== undefined) assertBytes(seed, 'seed', 64);
      try {
        const { sharedSecret, cipherText } = kem.encapsulate(publicKey, seed ?? randomBytes(64));
        return { sharedSecret, enc: cipherText };
      } catch {
        // ML-KEM's encapsulation key check (FIPS 203 section 7.2) or a low-order X25519 key.
        throw invalidPublicKey();
      }
    },
    decap(enc, privateKey) {
      assertBytes(privateKey, 'privateKey', L.privateKey);
      if (!(enc instanceof Uint8Array) || enc.length !== L.enc) throw new Error('invalid tag');
      try {
        return kem.decapsulate(enc, privateKey);
      } catch {
        throw new Error('invalid tag');
      }
    },
  };
}

/** Creates the KEM named `name` on the given X25519 implementation. */
export function createHpkeKem(name: HpkeKemName, x25519: X25519Backend): HpkeKem {
  if (name === 'X25519') return createDhkemX25519(x25519);
  if (name === 'X-Wing') return createXWing(x25519);
  throw new TypeError(`"kem" expected X25519 or X-Wing`);
}
