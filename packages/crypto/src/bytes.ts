/** Byte helpers shared by both backends: assertions that name the argument, hex, base64. */
import { bytesToHex as nobleBytesToHex, hexToBytes as nobleHexToBytes } from '@noble/hashes/utils.js';

/** Throws a TypeError unless `value` is a Uint8Array (of `length`, when given). */
export function assertBytes(value: unknown, name: string, length?: number): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new TypeError(`"${name}" expected Uint8Array, got type=${typeof value}`);
  }
  if (length !== undefined && value.length !== length) {
    throw new TypeError(`"${name}" expected Uint8Array of length ${length}, got length=${value.length}`);
  }
}

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;

/** Decodes an even-length hex string; throws a TypeError naming the argument otherwise. */
export function hexToBytes(hex: string, name = 'hex'): Uint8Array {
  if (typeof hex !== 'string' || !HEX_RE.test(hex)) {
    throw new TypeError(`"${name}" expected an even-length hex string`);
  }
  return nobleHexToBytes(hex);
}

/** Encodes bytes as lower-case hex. */
export function bytesToHex(bytes: Uint8Array): string {
  return nobleBytesToHex(bytes);
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
// Buffer is much faster on large bodies; atob/btoa keep the helpers portable.
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;

/** Decodes standard base64 (RFC 4648 section 4), refusing any other character. */
export function base64ToBytes(text: string, name = 'base64'): Uint8Array {
  const compact = typeof text === 'string' ? text.replace(/\s+/g, '') : '';
  if (compact.length % 4 !== 0 || !BASE64_RE.test(compact)) {
    throw new TypeError(`"${name}" expected standard base64`);
  }
  if (NodeBuffer) return new Uint8Array(NodeBuffer.from(compact, 'base64'));
  return Uint8Array.from(atob(compact), (c) => c.charCodeAt(0));
}

/** Encodes bytes as standard base64. */
export function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Compares two byte arrays in time that depends only on their lengths. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Compares two strings in time that depends only on their lengths (UTF-8 bytes). */
export function equalStrings(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  return equalBytes(encoder.encode(a), encoder.encode(b));
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
