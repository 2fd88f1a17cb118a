/**
 * A client's reading of a BIP-158 GCS filter (P = 19, M = 784931), written from BIP-158 alone
 * for the tests: whether `item` may be in the filter `filter` made under `key`.
 */
export function gcsMatches(filter: Uint8Array, key: Uint8Array, item: Uint8Array): boolean {
  let pos = 0;
  const first = filter[0]!;
  let n: number;
  if (first < 0xfd) {
    n = first;
    pos = 1;
  } else if (first === 0xfd) {
    n = filter[1]! | (filter[2]! << 8);
    pos = 3;
  } else {
    n = Buffer.from(filter).readUInt32LE(1);
    pos = 5;
  }
  if (n === 0) return false;
  const target = (sip(key, item) * (BigInt(n) * 784931n)) >> 64n;
  let bit = pos * 8;
  const readBit = (): number => {
    const v = (filter[bit >> 3]! >> (7 - (bit & 7))) & 1;
    bit += 1;
    return v;
  };
  let value = 0n;
  for (let i = 0; i < n; i += 1) {
    let q = 0n;
    while (readBit() === 1) q += 1n;
    let r = 0n;
    for (let j = 0; j < 19; j += 1) r = (r << 1n) | BigInt(readBit());
    value += (q << 19n) | r;
    if (value === target) return true;
    if (value > target) return false;
  }
  return false;
}

const M64 = (1n << 64n) - 1n;
const rot = (x: bigint, b: bigint): bigint => ((x << b) | (x >> (64n - b))) & M64;

/** SipHash-2-4, written again here so the test does not check the service's code against itself. */
function sip(key: Uint8Array, data: Uint8Array): bigint {
  const word = (b: Uint8Array, o: number): bigint => Buffer.from(b.subarray(o, o + 8)).readBigUInt64LE(0);
  const k0 = word(key, 0);
  const k1 = word(key, 8);
  let v0 = k0 ^ 0x736f6d6570736575n;
  let v1 = k1 ^ 0x646f72616e646f6dn;
  let v2 = k0 ^ 0x6c7967656e657261n;
  let v3 = k1 ^ 0x7465646279746573n;
  const round = (): void => {
    v0 = (v0 + v1) & M64;
    v1 = rot(v1, 13n) ^ v0;
    v0 = rot(v0, 32n);
    v2 = (v2 + v3) & M64;
    v3 = rot(v3, 16n) ^ v2;
    v0 = (v0 + v3) & M64;
    v3 = rot(v3, 21n) ^ v0;
    v2 = (v2 + v1) & M64;
    v1 = rot(v1, 17n) ^ v2;
    v2 = rot(v2, 32n);
  };
  const padded = Buffer.alloc(Math.floor(data.length / 8) * 8 + 8);
  padded.set(data);
  padded[padded.length - 1] = data.length & 0xff;
  for (let o = 0; o < padded.length; o += 8) {
    const m = word(padded, o);
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  v2 ^= 0xffn;
  for (let i = 0; i < 4; i += 1) round();
  return (v0 ^ v1 ^ v2 ^ v3) & M64;
}
