import { sha256 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js';

export { bytesToHex, concatBytes, hexToBytes };
// Bitcoin's serialization primitives: one copy, in @repo/bip352 (the services use it too).
export { compactSize, u32le, u64le } from '@repo/bip352';

/** Bitcoin's double SHA-256. */
export function sha256d(data: Uint8Array): Uint8Array {
  return sha256(sha256(data));
}

/** RIPEMD160(SHA256(data)), the hash of P2PKH and P2WPKH. */
export function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}

/** Hex of `bytes` in reverse order: how Bitcoin Core displays txids and block hashes. */
export function reverseHex(bytes: Uint8Array): string {
  return bytesToHex(Uint8Array.from(bytes).reverse());
}

/** Bytes of a display-order hash (txid, block hash), in internal (little-endian) order. */
export function hashFromHex(hex: string): Uint8Array {
  return hexToBytes(hex).reverse();
}

/** Whether `text` is a hex string (any length, lower or upper case). */
export function isHex(text: string): boolean {
  return /^[0-9a-fA-F]*$/.test(text);
}

/**
 * A JSON number written exactly as given. Bitcoin Core writes amounts with eight decimals
 * (`50.00000000`, UniValue's ValueFromAmount), which a JS number cannot keep.
 */
export class JsonRaw {
  constructor(readonly text: string) {}
}

/** Satoshis as Core's amount literal: `-0.00001310`, `50.00000000`. */
export function amount(sats: bigint): JsonRaw {
  const negative = sats < 0n;
  const abs = negative ? -sats : sats;
  const whole = abs / 100_000_000n;
  const frac = (abs % 100_000_000n).toString().padStart(8, '0');
  return new JsonRaw(`${negative ? '-' : ''}${whole}.${frac}`);
}

/**
 * A double as Core's UniValue writes it (`std::setprecision(16)`, i.e. `%.16g`): scientific
 * below 1e-4 or from 1e16, a two-digit exponent (`1.345564368877608e-08`), no trailing zeros.
 */
export function formatDouble(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return '0';
  const [mant, expText] = x.toExponential(15).split('e') as [string, string];
  const exp = Number(expText);
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? '-' : '+';
    return `${trim(mant)}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return trim(x.toFixed(Math.max(0, 15 - exp)));
}

/**
 * Serializes like UniValue::write(): no spaces, keys in insertion order, integers as
 * integers, other numbers with {@link formatDouble}, {@link JsonRaw} verbatim, `undefined`
 * members left out.
 */
export function writeJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isInteger(value) ? String(value) : formatDouble(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      break;
  }
  if (value instanceof JsonRaw) return value.text;
  if (Array.isArray(value)) return `[${value.map(writeJson).join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${writeJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}
