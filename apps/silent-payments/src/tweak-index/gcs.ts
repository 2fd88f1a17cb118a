import { compactSize } from '@repo/bip352';

/**
 * Golomb-coded sets as BIP-158 defines them (the "basic" filter's parameters P = 19, M = 784931),
 * which BlindBit's two filters reuse with their own elements (docs/silent-payments.md,
 * "BlindBit OracleService": "Filters").
 */
export const GCS_P = 19;
/** BIP-158's M for the basic filter. */
export const GCS_M = 784931n;

// SipHash's 64-bit words as two 32-bit halves (hi, lo) in plain numbers: no BigInt in the rounds.
// The state v0..v3 lives in one Uint32Array: v[2i] the high half of v_i, v[2i + 1] the low half.

/** v_a += v_b (mod 2^64). */
function add(v: Uint32Array, a: number, b: number): void {
  const lo = (v[a + 1]! + v[b + 1]!) >>> 0;
  v[a] = (v[a]! + v[b]! + (lo < v[a + 1]! ? 1 : 0)) >>> 0;
  v[a + 1] = lo;
}

/** v_a = rotl(v_a, n) for 0 < n < 32, then ^= v_b. */
function rotlXor(v: Uint32Array, a: number, n: number, b: number): void {
  const hi = v[a]!;
  const lo = v[a + 1]!;
  v[a] = ((hi << n) | (lo >>> (32 - n))) ^ v[b]!;
  v[a + 1] = ((lo << n) | (hi >>> (32 - n))) ^ v[b + 1]!;
}

/** v_a = rotl(v_a, 32): the halves swapped. */
function swap(v: Uint32Array, a: number): void {
  const hi = v[a]!;
  v[a] = v[a + 1]!;
  v[a + 1] = hi;
}

/** One SipRound on v0 (0), v1 (2), v2 (4), v3 (6). */
function sipRound(v: Uint32Array): void {
  add(v, 0, 2);
  rotlXor(v, 2, 13, 0);
  swap(v, 0);
  add(v, 4, 6);
  rotlXor(v, 6, 16, 4);
  add(v, 0, 6);
  rotlXor(v, 6, 21, 0);
  add(v, 4, 2);
  rotlXor(v, 2, 17, 4);
  swap(v, 4);
}

const u32le = (b: Uint8Array, i: number): number => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/** Absorbs the 64-bit message word (hi, lo): v3 ^= m, two rounds, v0 ^= m. */
function absorb(v: Uint32Array, hi: number, lo: number): void {
  v[6]! ^= hi;
  v[7]! ^= lo;
  sipRound(v);
  sipRound(v);
  v[0]! ^= hi;
  v[1]! ^= lo;
}

/** SipHash-2-4 of `data` under the 16-byte `key` (k0, k1 little-endian), as BIP-158 uses it. */
export function siphash24(key: Uint8Array, data: Uint8Array): bigint {
  const [k0hi, k0lo, k1hi, k1lo] = [u32le(key, 4), u32le(key, 0), u32le(key, 12), u32le(key, 8)];
  const v = Uint32Array.of(
    k0hi ^ 0x736f6d65,
    k0lo ^ 0x70736575,
    k1hi ^ 0x646f7261,
    k1lo ^ 0x6e646f6d,
    k0hi ^ 0x6c796765,
    k0lo ^ 0x6e657261,
    k1hi ^ 0x74656462,
    k1lo ^ 0x79746573,
  );
  const whole = data.length - (data.length % 8);
  for (let i = 0; i < whole; i += 8) absorb(v, u32le(data, i + 4), u32le(data, i));
  const tail = new Uint8Array(8);
  tail.set(data.subarray(whole));
  tail[7] = data.length & 0xff;
  absorb(v, u32le(tail, 4), u32le(tail, 0));
  v[5]! ^= 0xff;
  for (let r = 0; r < 4; r += 1) sipRound(v);
  const hi = (v[0]! ^ v[2]! ^ v[4]! ^ v[6]!) >>> 0;
  const lo = (v[1]! ^ v[3]! ^ v[5]! ^ v[7]!) >>> 0;
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The filter key of a block: the first 16 bytes of its hash in internal byte order (BIP-158). */
export function filterKey(blockHashHex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(blockHashHex, 'hex').reverse().subarray(0, 16));
}

/**
 * Each item hashed into [0, N·M) (BIP-158 "Hashing Data Objects"), sorted ascending; N·M < 2^53
 * (N below 11 billion), so each value is an exact number.
 */
function hashedSet(key: Uint8Array, items: readonly Uint8Array[]): number[] {
  const range = BigInt(items.length) * GCS_M;
  return items.map((item) => Number((siphash24(key, item) * range) >> 64n)).sort((a, b) => a - b);
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

  /** The low `count` bits of `value` (count ≤ 31), most significant first. */
  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i -= 1) this.bit(((value >>> i) & 1) === 1);
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
  let previous = 0;
  for (const value of hashedSet(key, items)) {
    const delta = value - previous;
    previous = value;
    const quotient = Math.floor(delta / 2 ** GCS_P);
    for (let q = 0; q < quotient; q += 1) writer.bit(true);
    writer.bit(false);
    writer.bits(delta % 2 ** GCS_P, GCS_P);
  }
  const body = writer.finish();
  const n = compactSize(items.length);
  const out = new Uint8Array(n.length + body.length);
  out.set(n, 0);
  out.set(body, n.length);
  return out;
}
