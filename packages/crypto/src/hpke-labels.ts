import { expand, extract } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from './bytes';

const encoder = new TextEncoder();
const HPKE_V1 = encoder.encode('HPKE-v1');

function i2osp2(n: number): Uint8Array {
  return new Uint8Array([(n >>> 8) & 0xff, n & 0xff]);
}

/** suite_id of a KEM: "KEM" || I2OSP(kem_id, 2) (RFC 9180 section 4.1). */
export function suiteIdKem(kemId: number): Uint8Array {
  return concatBytes(encoder.encode('KEM'), i2osp2(kemId));
}

/** suite_id of a full suite: "HPKE" || kem_id || kdf_id || aead_id (RFC 9180 section 5.1). */
export function suiteIdHpke(kemId: number, kdfId: number, aeadId: number): Uint8Array {
  return concatBytes(encoder.encode('HPKE'), i2osp2(kemId), i2osp2(kdfId), i2osp2(aeadId));
}

/** LabeledExtract(salt, label, ikm) with HKDF-SHA256 (RFC 9180 section 4). */
export function labeledExtract(suiteId: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array): Uint8Array {
  return extract(sha256, concatBytes(HPKE_V1, suiteId, encoder.encode(label), ikm), salt);
}

/** LabeledExpand(prk, label, info, L) with HKDF-SHA256 (RFC 9180 section 4). */
export function labeledExpand(suiteId: Uint8Array, prk: Uint8Array, label: string, info: Uint8Array, length: number): Uint8Array {
  return expand(sha256, prk, concatBytes(i2osp2(length), HPKE_V1, suiteId, encoder.encode(label), info), length);
}
