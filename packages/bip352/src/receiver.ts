import { loadSecp256k1Backend, type AnySecp256k1Backend } from './backend';
import { assertBytes, assertLabel, bytesToHex, key48, ser32 } from './bytes';
import { K_MAX } from './constants';
import { SilentPaymentError } from './errors';
import { taggedHash } from './hash';
import { isP2tr, type ScanInput, type ScanOutput } from './inputs';
import { labelTweak } from './labels';
import { assertValidScalar, computeInputData } from './tweak';

/** An output of a scanned transaction that belongs to the receiver. */
export interface FoundOutput {
  /** index of the output in the transaction. */
  index: number;
  /** its x-only taproot output key, hex. */
  xonly: string;
  /** the private key tweak, hex: spend with d = b_spend + tweak (mod n) (BIP-352 "Spending"). */
  tweak: string;
  /** the label m the output was paid to (0 = change), or null for the unlabelled address. */
  label: number | null;
  /** the output's k within the transaction. */
  k: number;
}

export interface ReceiverOptions {
  /** b_scan, 32 bytes. */
  scanPriv: Uint8Array;
  /** B_spend, 33 bytes compressed. */
  spendPub: Uint8Array;
  /** label indexes m ≥ 1 to scan for; the change label m = 0 is always scanned. */
  labels?: number[];
  /** the secp256k1 implementation; default {@link loadSecp256k1Backend}() (native, or an error). */
  backend?: AnySecp256k1Backend;
}

export interface Receiver {
  /** Starts scanning for label m as well (idempotent). */
  addLabel(m: number): void;
  /** The label indexes scanned for, change (0) included, ascending. */
  labels(): number[];
  /** The backend in use. */
  readonly backendName: string;
  /**
   * Scans one transaction: its inputs (with prevout scripts) and outputs. Returns the outputs
   * paying the receiver, [] when none or when the transaction is not eligible.
   */
  scanTransaction(inputs: readonly ScanInput[], outputs: readonly ScanOutput[]): FoundOutput[];
}

interface LabelEntry<P> {
  m: number;
  tweak: Uint8Array;
  point: P;
}

interface Candidate<P> {
  output: ScanOutput;
  /** position of the x-only key in output.script */
  lifted?: P | null;
}

/**
 * Creates a receiver for one (b_scan, B_spend) pair (BIP-352 "Receiver", "Scanning").
 *
 * Cost per transaction: the input keys are summed, input_hash·b_scan is computed as a scalar
 * first so the ECDH is one variable-base multiplication, then P_0 = B_spend + t_0·G. Points stay
 * in the backend's own form. Outputs are found through a Map keyed by the top 48 bits of their
 * x coordinate; labels likewise. With few labels (the change label only, typically) each label
 * L is added to P_k and looked up among the outputs (one addition per label); with many labels
 * each output minus P_k, and the negated output minus P_k, is looked up among the labels (two
 * additions per output, whatever the number of labels), as the BIP's footnote on precomputed
 * labels suggests. Scanning stops at k = K_max (BIP-352 v1.1).
 * @throws {TypeError|RangeError} on malformed keys or labels; {SilentPaymentError}
 *   `BACKEND_UNAVAILABLE` when no backend is given and the native one cannot be loaded.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const { scanPriv, spendPub } = options;
  assertBytes(scanPriv, 'scanPriv', 32);
  assertBytes(spendPub, 'spendPub', 33);
  assertValidScalar(scanPriv, 'scanPriv');
  const backend: AnySecp256k1Backend = options.backend ?? loadSecp256k1Backend();
  type P = unknown;
  const spend = backend.pointFromCompressed(spendPub) as P | null;
  if (spend === null) throw new TypeError('"spendPub" is not a valid compressed secp256k1 point');
  const scanKey = scanPriv.slice();

  const labelList: LabelEntry<P>[] = [];
  const labelsByKey = new Map<number, LabelEntry<P>[]>();
  const labelIndexes = new Set<number>();

  function addLabel(m: number): void {
    assertLabel(m);
    if (labelIndexes.has(m)) return;
    const tweak = labelTweak(scanKey, m);
    assertValidScalar(tweak, 'label tweak');
    const point = backend.baseMul(tweak) as P;
    const entry: LabelEntry<P> = { m, tweak, point };
    labelIndexes.add(m);
    labelList.push(entry);
    const key = backend.xKey(point);
    const bucket = labelsByKey.get(key);
    if (bucket) bucket.push(entry);
    else labelsByKey.set(key, [entry]);
  }

  addLabel(0); // BIP-352: always scan for the change label
  for (const m of options.labels ?? []) addLabel(m);

  /** The label whose point equals `point` (negated when `negated`), or undefined. */
  function findLabel(point: P, negated: boolean): LabelEntry<P> | undefined {
    const bucket = labelsByKey.get(backend.xKey(point));
    if (bucket === undefined) return undefined;
    const target = negated ? backend.negate(point) : point;
    for (const entry of bucket) if (backend.equals(entry.point, target)) return entry;
    return undefined;
  }

  function scanTransaction(inputs: readonly ScanInput[], outputs: readonly ScanOutput[]): FoundOutput[] {
    // outputs_to_check: the taproot output keys, by x key
    const remaining = new Map<number, Candidate<P>[]>();
    let remainingCount = 0;
    for (const output of outputs) {
      if (!isP2tr(output.script)) continue;
      const key = key48(output.script, 2);
      const bucket = remaining.get(key);
      if (bucket) bucket.push({ output });
      else remaining.set(key, [{ output }]);
      remainingCount++;
    }
    if (remainingCount === 0) return [];
    const data = computeInputData<P>(backend, inputs);
    if (data === null) return [];

    // one variable-base multiplication: (input_hash · b_scan) · A
    const ecdh = backend.mul(data.sum, backend.scalarMul(data.inputHash, scanKey));
    const ecdhBytes = backend.toCompressed(ecdh);

    const found: FoundOutput[] = [];
    for (let k = 0; k < K_MAX && remainingCount > 0; k++) {
      const tk = taggedHash('BIP0352/SharedSecret', ecdhBytes, ser32(k));
      assertValidScalar(tk, 't_k');
      const pk = backend.addTweak(spend, tk) as P | null;
      if (pk === null) break;
      const match = findOutput(pk, remaining, remainingCount);
      if (match === undefined) break;
      const { candidate, label } = match;
      removeCandidate(remaining, candidate);
      remainingCount--;
      found.push({
        index: candidate.output.index,
        xonly: bytesToHex(candidate.output.script.subarray(2, 34)),
        tweak: bytesToHex(label ? backend.scalarAdd(tk, label.tweak) : tk),
        label: label ? label.m : null,
        k,
      });
    }
    return found;
  }

  /** The remaining output equal to P_k or P_k + label (any label), with the label used. */
  function findOutput(
    pk: P,
    remaining: Map<number, Candidate<P>[]>,
    remainingCount: number,
  ): { candidate: Candidate<P>; label: LabelEntry<P> | null } | undefined {
    const exact = lookupOutput(pk, remaining);
    if (exact) return { candidate: exact, label: null };
    if (labelList.length <= 3 * remainingCount) {
      // few labels: P_k + L for each label, looked up among the outputs
      for (const label of labelList) {
        const sum = backend.add(pk, label.point) as P | null;
        if (sum === null) continue;
        const hit = lookupOutput(sum, remaining);
        if (hit) return { candidate: hit, label };
      }
      return undefined;
    }
    // many labels: output - P_k and -output - P_k = -(output + P_k), looked up among the labels
    const negPk = backend.negate(pk) as P;
    for (const bucket of remaining.values()) {
      for (const candidate of bucket) {
        if (candidate.lifted === undefined) candidate.lifted = backend.liftX(candidate.output.script.subarray(2, 34)) as P | null;
        const q = candidate.lifted;
        if (q === null) continue;
        const diff = backend.add(q, negPk) as P | null;
        let label = diff === null ? undefined : findLabel(diff, false);
        if (label === undefined) {
          const sum = backend.add(q, pk) as P | null;
          label = sum === null ? undefined : findLabel(sum, true);
        }
        if (label !== undefined) return { candidate, label };
      }
    }
    return undefined;
  }

  function lookupOutput(point: P, remaining: Map<number, Candidate<P>[]>): Candidate<P> | undefined {
    const bucket = remaining.get(backend.xKey(point));
    if (bucket === undefined) return undefined;
    for (const candidate of bucket) if (backend.xEquals(point, candidate.output.script, 2)) return candidate;
    return undefined;
  }

  return {
    addLabel,
    labels: () => [...labelIndexes].sort((a, b) => a - b),
    backendName: backend.name,
    scanTransaction(inputs, outputs) {
      if (!Array.isArray(inputs)) throw new TypeError('"inputs" expected an array of ScanInput');
      if (!Array.isArray(outputs)) throw new TypeError('"outputs" expected an array of ScanOutput');
      return scanTransaction(inputs, outputs);
    },
  };
}

function removeCandidate<P>(remaining: Map<number, Candidate<P>[]>, candidate: Candidate<P>): void {
  const key = key48(candidate.output.script, 2);
  const bucket = remaining.get(key);
  if (!bucket) return;
  const i = bucket.indexOf(candidate);
  if (i >= 0) bucket.splice(i, 1);
  if (bucket.length === 0) remaining.delete(key);
}

