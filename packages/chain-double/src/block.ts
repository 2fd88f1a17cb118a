import { bytesToHex, compactSize, concatBytes, hashFromHex, hexToBytes, reverseHex, sha256d, u32le, u64le } from './encoding';
import { decodeTx, type DecodedTx } from './tx';

/** The 80-byte block header fields. */
export interface BlockHeader {
  version: number;
  /** Display-order hash of the previous block. */
  prev: string;
  /** Display-order merkle root. */
  merkleRoot: string;
  time: number;
  bits: number;
  nonce: number;
}

/** Serializes a block header (80 bytes). */
export function serializeHeader(h: BlockHeader): Uint8Array {
  return concatBytes(u32le(h.version), hashFromHex(h.prev), hashFromHex(h.merkleRoot), u32le(h.time), u32le(h.bits), u32le(h.nonce));
}

/** The display-order hash of a header. */
export function headerHash(h: BlockHeader): string {
  return reverseHex(sha256d(serializeHeader(h)));
}

/** The target encoded by compact `bits`. */
export function bitsToTarget(bits: number): bigint {
  const exponent = bits >>> 24;
  const mantissa = BigInt(bits & 0x007fffff);
  return exponent <= 3 ? mantissa >> BigInt(8 * (3 - exponent)) : mantissa << BigInt(8 * (exponent - 3));
}

/** The work a block with these bits adds to the chain: 2^256 / (target + 1). */
export function blockWork(bits: number): bigint {
  return (1n << 256n) / (bitsToTarget(bits) + 1n);
}

/** Core's GetDifficulty. */
export function difficulty(bits: number): number {
  let shift = (bits >>> 24) & 0xff;
  let diff = 0x0000ffff / (bits & 0x00ffffff);
  while (shift < 29) {
    diff *= 256;
    shift++;
  }
  while (shift > 29) {
    diff /= 256;
    shift--;
  }
  return diff;
}

/** The merkle root over display-order hashes (Core's ComputeMerkleRoot, last one duplicated). */
export function merkleRoot(hashes: string[]): string {
  if (hashes.length === 0) return '0'.repeat(64);
  let level = hashes.map(hashFromHex);
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i] as Uint8Array;
      const right = level[i + 1] ?? left;
      next.push(sha256d(concatBytes(left, right)));
    }
    level = next;
  }
  return reverseHex(level[0] as Uint8Array);
}

/** Finds a nonce whose header hash meets the target (instant on regtest's 0x207fffff). */
export function mineHeader(h: BlockHeader): BlockHeader {
  const target = bitsToTarget(h.bits);
  const header = serializeHeader(h);
  const view = new DataView(header.buffer, header.byteOffset);
  for (let nonce = 0; nonce <= 0xffffffff; nonce++) {
    view.setUint32(76, nonce, true);
    const hash = sha256d(header);
    if (BigInt(`0x${reverseHex(hash)}`) <= target) return { ...h, nonce };
  }
  throw new Error('no nonce found');
}

/** Serializes a whole block: header, transaction count, transactions (with witness). */
export function serializeBlock(h: BlockHeader, txs: DecodedTx[]): Uint8Array {
  return concatBytes(serializeHeader(h), compactSize(txs.length), ...txs.map((t) => hexToBytes(t.hex)));
}

/** BIP-34 height push as CScript() << height: OP_0, OP_1..OP_16, or a minimal CScriptNum push. */
export function scriptNumPush(n: number): Uint8Array {
  if (n === 0) return Uint8Array.of(0x00);
  if (n >= 1 && n <= 16) return Uint8Array.of(0x50 + n);
  const bytes: number[] = [];
  let v = n;
  while (v > 0) {
    bytes.push(v & 0xff);
    v = Math.floor(v / 256);
  }
  if ((bytes[bytes.length - 1] as number) & 0x80) bytes.push(0);
  return Uint8Array.of(bytes.length, ...bytes);
}

/** Regtest/signet block subsidy: 50 BTC halving every `interval` blocks. */
export function blockSubsidy(height: number, interval: number): bigint {
  const halvings = Math.floor(height / interval);
  if (halvings >= 64) return 0n;
  return (50n * 100_000_000n) >> BigInt(halvings);
}

/**
 * Builds a coinbase like Core's miner: BIP-34 height and the extra nonce (OP_0) in the scriptSig, the reward
 * to `script`, and the BIP-141 witness commitment (`OP_RETURN aa21a9ed…`) with the reserved
 * value (32 zero bytes) as the coinbase witness.
 */
export function buildCoinbase(height: number, script: Uint8Array, value: bigint, otherWtxids: string[], extraNonce = 0): DecodedTx {
  const reserved = new Uint8Array(32);
  const witnessRoot = merkleRoot(['0'.repeat(64), ...otherWtxids]);
  const commitment = sha256d(concatBytes(hashFromHex(witnessRoot), reserved));
  const commitmentScript = concatBytes(Uint8Array.of(0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed), commitment);
  const scriptSig = concatBytes(scriptNumPush(height), scriptNumPush(extraNonce));
  const raw = concatBytes(
    u32le(2),
    Uint8Array.of(0x00, 0x01),
    compactSize(1),
    new Uint8Array(32),
    u32le(0xffffffff),
    compactSize(scriptSig.length),
    scriptSig,
    u32le(0xffffffff),
    compactSize(2),
    u64le(value),
    compactSize(script.length),
    script,
    u64le(0n),
    compactSize(commitmentScript.length),
    commitmentScript,
    compactSize(1),
    compactSize(32),
    reserved,
    u32le(0),
  );
  return decodeTx(raw);
}

/** The genesis coinbase shared by every Bitcoin chain ("The Times 03/Jan/2009 …"). */
export const GENESIS_COINBASE_HEX =
  '01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000';

/** Genesis header parameters of Core's chainparams. */
export const GENESIS = {
  regtest: { version: 1, time: 1296688602, bits: 0x207fffff, nonce: 2 },
  signet: { version: 1, time: 1598918400, bits: 0x1e0377ae, nonce: 52613770 },
} as const;

/** Bytes of a header hex, for getblockheader verbose=false. */
export function headerHex(h: BlockHeader): string {
  return bytesToHex(serializeHeader(h));
}
