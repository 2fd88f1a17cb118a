import type { AnySecp256k1Backend } from './backend';
import { loadSecp256k1Backend } from './load-backend';
import { bytesToHex } from './bytes';
import { smallestOutpoint, type ScanInput } from './inputs';
import { readPackedTransaction } from './packed';
import { taggedHash } from './hash';
import { computeInputData, eligibleInputKeys, isValidScalar } from './tweak';

/** The public data of a transaction that any receiver needs (BIP-352 Appendix A "Tweak Data"). */
export interface TweakData {
  /** A, the sum of the eligible input public keys, compressed hex. */
  inputPubKeySum: string;
  /** input_hash, hex. */
  inputHash: string;
  /** input_hash·A, compressed hex: the 33 bytes an index serves to light clients. */
  tweak: string;
}

/**
 * The tweak data of a transaction, or null when it is not eligible (SegWit v2+ spent, no
 * eligible input, or the keys sum to infinity).
 * @throws {SilentPaymentError} `INVALID_SCALAR` (negligible probability).
 */
export function computeTweakData(inputs: readonly ScanInput[], backend?: AnySecp256k1Backend): TweakData | null {
  const b = backend ?? loadSecp256k1Backend('noble');
  const data = computeInputData(b, inputs);
  if (data === null) return null;
  return {
    inputPubKeySum: bytesToHex(b.toCompressed(data.sum)),
    inputHash: bytesToHex(data.inputHash),
    tweak: bytesToHex(b.toCompressed(b.mul(data.sum, data.inputHash))),
  };
}

/** What {@link computePackedTweaks} needs of each of many transactions, read from their inputs. */
interface PackedTweakJobs {
  /** per transaction: 1 when it has eligible inputs (a job), 0 when it has none. */
  eligible: Uint8Array;
  /** per job: how many eligible input keys it has. */
  keyCounts: Uint32Array;
  /** the jobs' eligible input keys, 33 bytes compressed each, job after job. */
  keys: Uint8Array;
  /** per job: its smallest outpoint (36 bytes). */
  outpoints: Uint8Array;
}

/** The jobs of {@link computePackedTweaks} for transactions given by their inputs (with prevout scripts). */
function packTweakJobs(txs: readonly (readonly ScanInput[])[]): PackedTweakJobs {
  const eligible = new Uint8Array(txs.length);
  const jobs: Array<{ keys: Uint8Array[]; outpoint: Uint8Array }> = [];
  let keyCount = 0;
  txs.forEach((inputs, i) => {
    const keys = eligibleInputKeys(inputs);
    if (keys === null) return;
    eligible[i] = 1;
    keyCount += keys.length;
    jobs.push({ keys, outpoint: smallestOutpoint(inputs) });
  });
  const packed: PackedTweakJobs = {
    eligible,
    keyCounts: new Uint32Array(jobs.length),
    keys: new Uint8Array(33 * keyCount),
    outpoints: new Uint8Array(36 * jobs.length),
  };
  let at = 0;
  jobs.forEach((job, j) => {
    packed.keyCounts[j] = job.keys.length;
    for (const key of job.keys) {
      packed.keys.set(key, at);
      at += 33;
    }
    packed.outpoints.set(job.outpoint, 36 * j);
  });
  return packed;
}

/** One job's tweak by the backend's public steps (those without a `tweaks` of their own): null as `computeTweaks` gives it. */
function tweakByStep(b: AnySecp256k1Backend, keys: Uint8Array, outpoint: Uint8Array): Uint8Array | null {
  const each: Uint8Array[] = [];
  for (let at = 0; at < keys.length; at += 33) each.push(keys.subarray(at, at + 33));
  const sum = b.sumCompressed(each);
  if (sum === null) return null;
  const inputHash = taggedHash('BIP0352/Inputs', outpoint, b.toCompressed(sum));
  return isValidScalar(inputHash) ? b.toCompressed(b.mul(sum, inputHash)) : null;
}

/**
 * The tweaks of packed jobs ({@link packTweakJobs}), one per transaction, null for one with no
 * job or whose keys have no tweak; as {@link computeTweaks} gives them.
 */
function computePackedTweaks(jobs: PackedTweakJobs, backend?: AnySecp256k1Backend): Array<Uint8Array | null> {
  const b = backend ?? loadSecp256k1Backend();
  const views: Array<{ keys: Uint8Array; outpoint: Uint8Array }> = [];
  let at = 0;
  jobs.keyCounts.forEach((count, j) => {
    views.push({ keys: jobs.keys.subarray(at, at + 33 * count), outpoint: jobs.outpoints.subarray(36 * j, 36 * j + 36) });
    at += 33 * count;
  });
  const tweaks = b.tweaks !== undefined ? b.tweaks(views) : views.map((v) => tweakByStep(b, v.keys, v.outpoint));
  const answers = new Array<Uint8Array | null>(jobs.eligible.length).fill(null);
  let j = 0;
  jobs.eligible.forEach((mark, i) => {
    if (mark === 1) answers[i] = tweaks[j++] ?? null;
  });
  return answers;
}

/**
 * The tweaks (input_hash·A, 33 bytes compressed: what an index serves to light clients) of many
 * transactions, each given by its inputs (with prevout scripts): null for one that is not
 * eligible or whose input_hash is not a valid scalar (negligible probability). The backend is
 * `backend`, else the default (native). With the native backend one call into C for all of them,
 * eight at a time sharing their inversions (native/README.md, "Tweaks"); with the others the
 * steps one by one.
 */
export function computeTweaks(txs: readonly (readonly ScanInput[])[], backend?: AnySecp256k1Backend): Array<Uint8Array | null> {
  return computePackedTweaks(packTweakJobs(txs), backend);
}

/** Bytes of one record of {@link computeTweaksOfPacked}: the transaction's offset (u32 LE), then its tweak (33). */
export const PACKED_TWEAK_BYTES = 37;

/**
 * The tweaks of packed transactions (src/packed.ts, the form packBlockAnswer gives a block's),
 * as records of {@link PACKED_TWEAK_BYTES}: the transaction's offset in `jobs` (u32 LE), then its
 * tweak input_hash·A (33 bytes compressed). A transaction without a tweak (not eligible, A at
 * infinity, input_hash not a scalar) has no record or a record of zeros. With the native backend
 * the inputs are read and the tweaks computed in one call into C; with the others transaction by
 * transaction as {@link computeTweaks}. One buffer of its own (transferable).
 * @throws {TypeError} when `jobs` is not whole packed transactions.
 */
export function computeTweaksOfPacked(jobs: Uint8Array, backend?: AnySecp256k1Backend): Uint8Array {
  const b = backend ?? loadSecp256k1Backend();
  if (b.tweaksPacked !== undefined) return new Uint8Array(b.tweaksPacked(jobs));
  const offsets: number[] = [];
  const inputs: ScanInput[][] = [];
  for (let at = 0; at < jobs.length;) {
    const { tx, next } = readPackedTransaction(jobs, at);
    offsets.push(at);
    inputs.push(tx.inputs);
    at = next;
  }
  const tweaks = computeTweaks(inputs, b);
  const out = new Uint8Array(PACKED_TWEAK_BYTES * tweaks.length);
  const view = new DataView(out.buffer);
  tweaks.forEach((tweak, i) => {
    view.setUint32(PACKED_TWEAK_BYTES * i, offsets[i]!, true);
    if (tweak !== null) out.set(tweak, PACKED_TWEAK_BYTES * i + 4);
  });
  return out;
}
