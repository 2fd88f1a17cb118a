import { compactSize } from '@repo/bip352';

/**
 * Golomb-coded sets as BIP-158 defines them (the "basic" filter's parameters P = 19, M = 784931),
 * which BlindBit's two filters reuse with their own elements (docs/silent-payments.md,
 * "BlindBit OracleService": "Filters").
 */
export const GCS_P = 19;
/** BIP-158's M for the basic filter. */
export const GCS_M = 784931n;

const MASK64 = (1n << 64n) - 1n;

function rotl(x: bigint, b: bigint): bigint {
  return ((x << b) | (x >> (64n - b))) & MASK64;
}

function readU64le(bytes: Uint8Array, offset: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i -= 1) v = (v << 8n) | BigInt(bytes[offset + i] ?? 0);
  return v;
}

/** SipHash-2-4 of `data` under the 16-byte `key` (k0, k1 little-endian), as BIP-158 uses it. */
export function siphash24(key: Uint8Array, data: Uint8Array): bigint {
  const k0 = readU64le(key, 0);
  const k1 = readU64le(key, 8);
  const v = [k0 ^ 0x736f6d6570736575n, k1 ^ 0x646f72616e646f6dn, k0 ^ 0x6c7967656e657261n, k1 ^ 0x7465646279746573n];
  const round = (): void => {
    v[0] = (v[0]! + v[1]!) & MASK64;
    v[1] = rotl(v[1]!, 13n) ^ v[0];
    v[0] = rotl(v[0], 32n);
    v[2] = (v[2]! + v[3]!) & MASK64;
    v[3] = rotl(v[3]!, 16n) ^ v[2];
    v[0] = (v[0] + v[3]) & MASK64;
    v[3] = rotl(v[3], 21n) ^ v[0];
    v[2] = (v[2] + v[1]) & MASK64;
    v[1] = rotl(v[1], 17n) ^ v[2];
    v[2] = rotl(v[2], 32n);
  };
  const whole = data.length - (data.length % 8);
  for (let i = 0; i < whole; i += 8) {
    const m = readU64le(data, i);
    v[3]! ^= m;
    round();
    round();
    v[0]! ^= m;
  }
  let last = BigInt(data.length & 0xff) << 56n;
  for (let i = whole; i < data.length; i += 1) last |= BigInt(data[i]!) << BigInt(8 * (i - whole));
  v[3]! ^= last;
  round();
  round();
  v[0]! ^= last;
  v[2]! ^= 0xffn;
  round();
  round();
  round();
  round();
  return (v[0]! ^ v[1]! ^ v[2]! ^ v[3]!) & MASK64;
}

/** The filter key of a block: the first 16 bytes of its hash in internal byte order (BIP-158). */
export function filterKey(blockHashHex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(blockHashHex, 'hex').reverse().subarray(0, 16));
}

/** Each item hashed into [0, N·M) (BIP-158 "Hashing Data Objects"), sorted ascending. */
function hashedSet(key: Uint8Array, items: readonly Uint8Array[]): bigint[] {
  const range = BigInt(items.length) * GCS_M;
  return items.map((item) => (siphash24(key, item) * range) >> 64n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

class BitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private used = 0;

  bit(one: boolean): void {
    if (one) this.current |= 0x80 >> this.used;
    this.used += 1;
    if (this.used === 8) this.flush();
  }

  bits(value: bigint, count: number): void {
    for (let i = count - 1; i >= 0; i -= 1) this.bit(((value >> BigInt(i)) & 1n) === 1n);
  }

  private flush(): void {
    this.bytes.push(this.current);
    this.current = 0;
    this.used = 0;
  }

  finish(): Uint8Array {
    if (this.used > 0) this.flush();
    return Uint8Array.from(this.bytes);
  }
}

/**
 * A GCS filter over `items` (P = 19, M = 784931), serialized as BIP-158 does: N as a CompactSize,
 * then the Golomb-Rice coded deltas. Items are not de-duplicated here (BIP-158's basic filter
 * does that before; BlindBit's filters do not), so N is `items.length`.
 */
export function buildGcsFilter(key: Uint8Array, items: readonly Uint8Array[]): Uint8Array {
  const writer = new BitWriter();
  let previous = 0n;
  for (const value of hashedSet(key, items)) {
    const delta = value - previous;
    previous = value;
    const quotient = delta >> BigInt(GCS_P);
    for (let q = 0n; q < quotient; q += 1n) writer.bit(true);
    writer.bit(false);
    writer.bits(delta & ((1n << BigInt(GCS_P)) - 1n), GCS_P);
  }
  const body = writer.finish();
  const n = compactSize(items.length);
  const out = new Uint8Array(n.length + body.length);
  out.set(n, 0);
  out.set(body, n.length);
  return out;
}
