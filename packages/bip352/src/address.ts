import { bech32m } from '@scure/base';
import { assertBytes } from './bytes';
import { HRP_MAINNET, HRP_TESTNET, MAX_ADDRESS_LENGTH } from './constants';
import { SilentPaymentError } from './errors';
import { secp256k1 } from '@noble/curves/secp256k1.js';

/** Bitcoin networks; every network but mainnet uses the `tsp` prefix. */
export type Network = 'mainnet' | 'testnet' | 'signet' | 'regtest';

export const NETWORKS: readonly Network[] = ['mainnet', 'testnet', 'signet', 'regtest'];

/** A decoded silent payment address. */
export interface DecodedSilentPaymentAddress {
  scanPub: Uint8Array;
  spendPub: Uint8Array;
  version: number;
  hrp: 'sp' | 'tsp';
}

/** The bech32m prefix of a network: `sp` on mainnet, `tsp` on testnet, signet and regtest. */
export function hrpForNetwork(network: Network): 'sp' | 'tsp' {
  if (!NETWORKS.includes(network)) {
    throw new RangeError(`"network" expected one of ${NETWORKS.join(', ')}, got ${String(network)}`);
  }
  return network === 'mainnet' ? HRP_MAINNET : HRP_TESTNET;
}

function isValidCompressedPoint(bytes: Uint8Array): boolean {
  if (bytes.length !== 33 || (bytes[0] !== 0x02 && bytes[0] !== 0x03)) return false;
  try {
    secp256k1.Point.fromBytes(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Encodes a version-0 silent payment address: bech32m of hrp, the version character "q" and
 * ser_P(B_scan) || ser_P(B_m) (BIP-352 "Address encoding").
 * @throws {TypeError} when a key is not 33 bytes or not a valid compressed point.
 */
export function encodeSilentPaymentAddress(scanPub: Uint8Array, spendPub: Uint8Array, network: Network): string {
  assertBytes(scanPub, 'scanPub', 33);
  assertBytes(spendPub, 'spendPub', 33);
  if (!isValidCompressedPoint(scanPub)) throw new TypeError('"scanPub" is not a valid compressed secp256k1 point');
  if (!isValidCompressedPoint(spendPub)) throw new TypeError('"spendPub" is not a valid compressed secp256k1 point');
  const data = new Uint8Array(66);
  data.set(scanPub, 0);
  data.set(spendPub, 33);
  return bech32m.encode(hrpForNetwork(network), [0, ...bech32m.toWords(data)], MAX_ADDRESS_LENGTH);
}

/** The first `count` bytes of 5-bit words, ignoring what follows (BIP-352 versions 1..30). */
function firstBytesOfWords(words: ArrayLike<number>, count: number): Uint8Array | null {
  const out = new Uint8Array(count);
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < words.length && o < count; i++) {
    acc = ((acc << 5) | (words[i] as number)) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >>> bits) & 0xff;
    }
  }
  return o === count ? out : null;
}

/**
 * Decodes a silent payment address with the version rules of BIP-352 "Versions": v0 carries
 * exactly 66 bytes; v1..v30 are read as their first 66 bytes (the rest is for future versions);
 * v31 is rejected. The hrp must be `sp` or `tsp`, the length at most 1023 characters, both keys
 * valid compressed points.
 * @throws {SilentPaymentError} `INVALID_ADDRESS` saying what is wrong.
 */
export function decodeSilentPaymentAddress(address: string): DecodedSilentPaymentAddress {
  if (typeof address !== 'string') throw new SilentPaymentError('INVALID_ADDRESS', 'address must be a string');
  if (address.length > MAX_ADDRESS_LENGTH) {
    throw new SilentPaymentError('INVALID_ADDRESS', `address longer than ${MAX_ADDRESS_LENGTH} characters`);
  }
  let decoded: { prefix: string; words: number[] };
  try {
    decoded = bech32m.decode(address as `${string}1${string}`, MAX_ADDRESS_LENGTH);
  } catch (error) {
    throw new SilentPaymentError('INVALID_ADDRESS', `not a bech32m string: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const { prefix, words } = decoded;
  if (prefix !== HRP_MAINNET && prefix !== HRP_TESTNET) {
    throw new SilentPaymentError('INVALID_ADDRESS', `unknown prefix "${prefix}" (expected sp or tsp)`);
  }
  const version = words[0];
  if (version === undefined) throw new SilentPaymentError('INVALID_ADDRESS', 'missing version');
  if (version === 31) throw new SilentPaymentError('INVALID_ADDRESS', 'version 31 is reserved for an incompatible change');
  let data: Uint8Array | null;
  if (version === 0) {
    const bytes = bech32m.fromWordsUnsafe(words.slice(1));
    data = bytes && bytes.length === 66 ? bytes : null;
    if (data === null) throw new SilentPaymentError('INVALID_ADDRESS', 'version 0 needs exactly 66 bytes of data');
  } else {
    data = firstBytesOfWords(words.slice(1), 66);
    if (data === null) throw new SilentPaymentError('INVALID_ADDRESS', `version ${version} needs at least 66 bytes of data`);
  }
  const scanPub = data.slice(0, 33);
  const spendPub = data.slice(33, 66);
  if (!isValidCompressedPoint(scanPub)) throw new SilentPaymentError('INVALID_ADDRESS', 'scan key is not a valid point');
  if (!isValidCompressedPoint(spendPub)) throw new SilentPaymentError('INVALID_ADDRESS', 'spend key is not a valid point');
  return { scanPub, spendPub, version, hrp: prefix };
}
