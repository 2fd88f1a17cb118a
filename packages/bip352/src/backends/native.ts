import { join } from 'node:path';
import { equalBytes, key48 } from '../bytes';
import type { PackedMatches, Secp256k1Backend, TransactionMatch, TransactionScanner } from '../backend';
import { SilentPaymentError } from '../errors';
import { bigintScalars } from './scalar';

/** The subset of the `secp256k1` 5.x binding API used here (its own typings cover the rest). */
interface NativeSecp256k1 {
  publicKeyConvert(key: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyNegate(key: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyCombine(keys: Uint8Array[], compressed?: boolean): Uint8Array;
  publicKeyTweakAdd(key: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyTweakMul(key: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyCreate(key: Uint8Array, compressed?: boolean): Uint8Array;
  privateKeyTweakMul(key: Uint8Array, tweak: Uint8Array): Uint8Array;
  privateKeyTweakAdd(key: Uint8Array, tweak: Uint8Array): Uint8Array;
  privateKeyNegate(key: Uint8Array): Uint8Array;
}

/**
 * Loads `secp256k1/bindings`, the N-API addon only. The package's main entry falls back to a
 * pure-JS `elliptic` implementation when the addon is missing; requiring the bindings directly
 * makes a missing addon an error instead of a silent 20x slowdown.
 */
export function loadNativeBinding(): NativeSecp256k1 {
  return require('secp256k1/bindings') as NativeSecp256k1;
}

/** The addon built from native/scan.c (`npm run build` compiles it into dist/native). */
interface ScanAddon {
  createScanner(scanKey: Uint8Array, spend: Uint8Array): object;
  addSpendKey(handle: object, point: Uint8Array | null, slot: number): void;
  /** the matches (44 bytes each), or 0 for none, or a negative code. */
  scan(handle: object, keys: Uint8Array, outpoint: Uint8Array, xs: Uint8Array, kMax: number, ecOnly: boolean): Buffer | number;
  /**
   * Many transactions: keys, outpoints and x-only keys of each one after the other, with their
   * counts; for each transaction at 4 i + 44 (outputs before it), scan's number for it, then
   * that many matches.
   */
  scanMany(
    handle: object,
    keys: Uint8Array,
    keyCounts: Uint32Array,
    outpoints: Uint8Array,
    xs: Uint8Array,
    xsCounts: Uint32Array,
    kMax: number,
    ecOnly: boolean,
    tweaked?: boolean,
  ): Buffer;
  /** For each transaction (keys and outpoint as scanMany takes them), its tweak input_hash·A at 33 i; 33 zero bytes for none. */
  tweaks(keys: Uint8Array, keyCounts: Uint32Array, outpoints: Uint8Array): Buffer;
  /** For each packed transaction with an eligible key and a taproot output: its offset in `jobs` (u32 LE), then its tweak (33 bytes, zeros for none). */
  tweaksPacked(jobs: Uint8Array): Buffer;
  /**
   * Packed transactions (src/packed.ts) read and scanned in C: for each one with matches or an
   * error, in order, its offset in `jobs` (u32), scan's number for it (i32), then its matches.
   */
  scanPacked(handle: object, jobs: Uint8Array, kMax: number, ecOnly: boolean): Buffer;
  /** How many multiplications scanMany does at once: 8 with AVX-512 IFMA, 0 without (one by one). */
  lanes(): number;
  /** For the tests: the 8-lane multiplication against libsecp256k1's on n pairs: [differing, recomputed], or null without lanes. */
  lanesSelfTest(n: number): [number, number] | null;
  /** For the tests: the scanner's divsteps inversion against libsecp256k1's on n values; how many differ. */
  inverseSelfTest(n: number): number;
}

/** Where the build puts the addon; the same path from src/ (tests) and dist/ (the build). */
export const SCAN_ADDON_PATH = join(__dirname, '..', '..', 'dist', 'native', 'bip352_scan.node');

/** Loads the scanner addon; throws when it was not built (no C compiler at install time). */
export function loadScanAddon(): ScanAddon {
  return require(SCAN_ADDON_PATH) as ScanAddon;
}

const MATCH_BYTES = 44;
const NOT_ELIGIBLE = -1;
const BAD_INPUT_HASH = -2;

function createTransactionScanner(addon: ScanAddon, scanKey: Uint8Array, spend: Uint8Array): TransactionScanner<Uint8Array> {
  const handle = addon.createScanner(scanKey, spend);
  return {
    addSpendKey: (point, slot) => addon.addSpendKey(handle, point, slot),
    scan(keys, outpoint, xs, kMax, ecOnly = false) {
      const out = addon.scan(handle, keys, outpoint, xs, kMax, ecOnly);
      if (typeof out !== 'number') return readMatches(out, 0, out.length / MATCH_BYTES);
      const answer = answerOf(out);
      if (answer instanceof SilentPaymentError) throw answer;
      return answer;
    },
    scanMany(txs, kMax, ecOnly = false) {
      const { keys, keyCounts, outpoints } = packKeys(txs);
      const { xs, xsCounts } = packXs(txs);
      return readAnswers(addon.scanMany(handle, keys, keyCounts, outpoints, xs, xsCounts, kMax, ecOnly), xsCounts);
    },
    scanTweaks(rows, kMax) {
      const keys = new Uint8Array(33 * rows.length);
      rows.forEach((row, i) => {
        if (row.tweak.length !== 33) throw new TypeError('tweak: expected 33 bytes');
        keys.set(row.tweak, 33 * i);
      });
      const { xs, xsCounts } = packXs(rows);
      const keyCounts = new Uint32Array(rows.length).fill(1);
      const outpoints = new Uint8Array(36 * rows.length); // not read
      return readAnswers(addon.scanMany(handle, keys, keyCounts, outpoints, xs, xsCounts, kMax, false, true), xsCounts);
    },
    scanPacked(jobs, kMax, ecOnly = false) {
      const out = addon.scanPacked(handle, jobs, kMax, ecOnly);
      const answers: PackedMatches[] = [];
      for (let at = 0; at < out.length;) {
        const offset = out.readUInt32BE(at);
        const count = out.readInt32BE(at + 4);
        answers.push({ offset, answer: count > 0 ? readMatches(out, at + 8, count) : invalidScalar(count) });
        at += 8 + (count > 0 ? count * MATCH_BYTES : 0);
      }
      return answers;
    },
  };
}

/** The keys, their counts and the outpoints of `jobs`, one after the other, as the addon takes them. */
function packKeys(jobs: readonly { keys: Uint8Array; outpoint: Uint8Array }[]) {
  let keyBytes = 0;
  for (const job of jobs) keyBytes += job.keys.length;
  const keys = new Uint8Array(keyBytes);
  const keyCounts = new Uint32Array(jobs.length);
  const outpoints = new Uint8Array(36 * jobs.length);
  let at = 0;
  jobs.forEach((job, i) => {
    if (job.keys.length % 33 !== 0) throw new TypeError('keys: expected 33-byte keys');
    if (job.outpoint.length !== 36) throw new TypeError('outpoint: expected 36 bytes');
    keys.set(job.keys, at);
    outpoints.set(job.outpoint, 36 * i);
    at += job.keys.length;
    keyCounts[i] = job.keys.length / 33;
  });
  return { keys, keyCounts, outpoints };
}

/** The x-only keys of `jobs` and their counts. */
function packXs(jobs: readonly { xs: Uint8Array }[]) {
  let xsBytes = 0;
  for (const job of jobs) xsBytes += job.xs.length;
  const xs = new Uint8Array(xsBytes);
  const xsCounts = new Uint32Array(jobs.length);
  let at = 0;
  jobs.forEach((job, i) => {
    if (job.xs.length % 32 !== 0) throw new TypeError('xs: expected 32-byte x-only keys');
    xs.set(job.xs, at);
    at += job.xs.length;
    xsCounts[i] = job.xs.length / 32;
  });
  return { xs, xsCounts };
}

/** scanMany's answer buffer read: for each transaction its matches, null or the error. */
function readAnswers(out: Buffer, xsCounts: Uint32Array): Array<TransactionMatch[] | null | SilentPaymentError> {
  const answers: Array<TransactionMatch[] | null | SilentPaymentError> = [];
  let at = 0;
  for (const outputs of xsCounts) {
    const count = out.readInt32BE(at);
    answers.push(count > 0 ? readMatches(out, at + 4, count) : answerOf(count));
    at += 4 + MATCH_BYTES * outputs;
  }
  return answers;
}

/** What scan's number means when it is not a count of matches: none (0), not eligible (null), or an invalid scalar. */
function answerOf(code: number): TransactionMatch[] | null | SilentPaymentError {
  if (code === 0) return [];
  if (code === NOT_ELIGIBLE) return null;
  return invalidScalar(code);
}

/** The error of a negative code other than NOT_ELIGIBLE: input_hash or a t_k is not a valid scalar. */
function invalidScalar(code: number): SilentPaymentError {
  return new SilentPaymentError('INVALID_SCALAR', `${code === BAD_INPUT_HASH ? 'input_hash' : 't_k'} is not a valid scalar`);
}

/** `count` matches of MATCH_BYTES each from `at`. */
function readMatches(out: Buffer, at: number, count: number): TransactionMatch[] {
  const matches: TransactionMatch[] = [];
  for (let end = at + count * MATCH_BYTES; at < end; at += MATCH_BYTES) {
    matches.push({
      position: out.readUInt32BE(at),
      k: out.readUInt32BE(at + 4),
      labelSlot: out.readInt32BE(at + 8),
      tk: Uint8Array.prototype.slice.call(out, at + 12, at + 44),
    });
  }
  return matches;
}

/** The field prime p, big-endian (for negation over the bytes). */
const FIELD_P_BYTES = Uint8Array.from(Buffer.from('fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f', 'hex'));

/**
 * libsecp256k1 through the `secp256k1` N-API binding, and a whole-transaction scanner compiled
 * from the same libsecp256k1 source (native/scan.c). Points are 65-byte uncompressed SEC1
 * buffers: parsing them costs no square root, and the affine x is bytes 1..32, so comparisons
 * and Map keys read the buffer directly.
 */
export function createNativeBackend(): Secp256k1Backend<Uint8Array> {
  const s = loadNativeBinding();
  const addon = loadScanAddon();
  const PREFIX_EVEN = new Uint8Array(33);
  PREFIX_EVEN[0] = 0x02;
  return {
    name: 'native',
    pointFromCompressed(bytes) {
      try {
        return s.publicKeyConvert(bytes, false);
      } catch {
        return null;
      }
    },
    liftX(x) {
      PREFIX_EVEN.set(x, 1);
      try {
        return s.publicKeyConvert(PREFIX_EVEN, false);
      } catch {
        return null;
      }
    },
    add(a, b) {
      try {
        return s.publicKeyCombine([a, b], false);
      } catch {
        return null;
      }
    },
    sum(points) {
      if (points.length === 1) return points[0] as Uint8Array;
      try {
        return s.publicKeyCombine(points, false);
      } catch {
        return null;
      }
    },
    sumCompressed(keys) {
      if (keys.length === 1) return this.pointFromCompressed(keys[0] as Uint8Array);
      try {
        return s.publicKeyCombine(keys, false);
      } catch {
        // an invalid key among them, or a sum at infinity: parse one by one
        const points = keys.map((k) => this.pointFromCompressed(k)).filter((p): p is Uint8Array => p !== null);
        return points.length === 0 ? null : this.sum(points);
      }
    },
    negate(a) {
      // y -> p - y over the bytes (y ≠ 0 on secp256k1): no binding call for a subtraction
      const out = a.slice();
      let borrow = 0;
      for (let i = 31; i >= 0; i--) {
        const d = (FIELD_P_BYTES[i] as number) - (a[33 + i] as number) - borrow;
        out[33 + i] = d & 0xff;
        borrow = d < 0 ? 1 : 0;
      }
      return out;
    },
    mul: (p, scalar) => s.publicKeyTweakMul(p, scalar, false),
    addTweak(p, t) {
      try {
        return s.publicKeyTweakAdd(p, t, false);
      } catch {
        return null;
      }
    },
    baseMul: (scalar) => s.publicKeyCreate(scalar, false),
    toCompressed(p) {
      const out = new Uint8Array(33);
      out[0] = 0x02 | ((p[64] as number) & 1);
      out.set(p.subarray(1, 33), 1);
      return out;
    },
    toXOnly: (p) => p.slice(1, 33),
    xKey: (p) => key48(p, 1),
    xEquals: (p, x, offset = 0) => equalBytes(p.subarray(1, 33), x, offset, 32),
    equals: (a, b) => equalBytes(a, b),
    // libsecp256k1 scalar arithmetic: faster than bigint; the callers pass valid scalars
    scalarMul: (a, b) => s.privateKeyTweakMul(a.slice(), b),
    scalarAdd(a, b) {
      try {
        return s.privateKeyTweakAdd(a.slice(), b);
      } catch {
        return bigintScalars.scalarAdd(a, b); // the sum is 0 (libsecp256k1 refuses a zero key)
      }
    },
    scalarNegate: (a) => s.privateKeyNegate(a.slice()),
    createTransactionScanner: (scanKey, spend) => createTransactionScanner(addon, scanKey, spend),
    tweaksPacked: (jobs) => addon.tweaksPacked(jobs),
    tweaks(jobs) {
      const { keys, keyCounts, outpoints } = packKeys(jobs);
      const out = addon.tweaks(keys, keyCounts, outpoints);
      return jobs.map((_, i) => (out[33 * i] === 0 ? null : Uint8Array.prototype.slice.call(out, 33 * i, 33 * i + 33)));
    },
  };
}
