import type { Secp256k1Backend, TransactionMatch, TransactionScanJob, TransactionScanner } from './backend';
import { loadSecp256k1Backend } from './load-backend';
import { assertBytes, bytesToHex, key48, ser32 } from './bytes';
import { K_MAX } from './constants';
import { taggedHash } from './hash';
import { isP2tr, smallestOutpoint, type ScanInput, type ScanOutput } from './inputs';
import { createLabelTable, type LabelTable } from './label-table';
import { readPackedTransaction, readPackedTransactions } from './packed';
import { assertValidScalar, computeInputData, eligibleInputKeys, labelTweak } from './tweak';

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

export interface ReceiverOptions<P = unknown> {
  /** b_scan, 32 bytes. */
  scanPriv: Uint8Array;
  /** B_spend, 33 bytes compressed. */
  spendPub: Uint8Array;
  /** label indexes m ≥ 1 to scan for; the change label m = 0 is always scanned. */
  labels?: number[];
  /** the secp256k1 implementation; default {@link loadSecp256k1Backend}() (native, or an error). */
  backend?: Secp256k1Backend<P>;
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
  /**
   * Scans several transactions: for each, what {@link scanTransaction} returns, or the error it
   * would throw. The same answers; with the native backend one call into C for all of them, which
   * takes them eight at a time and shares their inversions, and multiplies the eight at once
   * where the CPU has AVX-512 IFMA (native/README.md, "Scanning many transactions").
   */
  scanTransactions(txs: readonly TransactionToScan[]): Array<FoundOutput[] | Error>;
  /**
   * Scans packed transactions (src/packed.ts, the form packBlockAnswer gives a block's), with
   * the answers of {@link scanTransactions}: the transactions paying the receiver, and those it
   * refused with the error scanTransactions returns for them; the others are not listed. With the
   * native backend the inputs are read in C, no object per input (native/README.md, "Scanning packed
   * transactions"); with the others, read here and given to scanTransactions.
   * @throws {TypeError} when `jobs` is not whole packed transactions.
   */
  scanPacked(jobs: Uint8Array): PackedScan;
  /**
   * Scans rows of a tweak index (what a light client downloads: BIP-352 "Scanning" from each
   * transaction's tweak input_hash·A, the ECDH point b_scan·tweak): for each row, the outputs
   * paying the receiver, `index` their position among the row's `outputs`; [] for a row whose
   * tweak is not a curve point. With the native backend one call into C for all rows, as
   * {@link scanTransactions}; labels (change included) as for transactions.
   */
  scanTweaks(rows: readonly TweakRow[]): Array<FoundOutput[] | Error>;
}

/** A row of a tweak index for {@link Receiver.scanTweaks}. */
export interface TweakRow {
  /** input_hash·A, 33 bytes compressed. */
  tweak: Uint8Array;
  /** the x-only keys of the transaction's taproot outputs, 32 bytes each. */
  outputs: readonly Uint8Array[];
}

/** What {@link Receiver.scanPacked} found, in the transactions' order. */
export interface PackedScan {
  /** The transactions paying the receiver: txid, the outputs found, the value (BTC) of each. */
  hits: Array<{ txid: string; found: FoundOutput[]; values: number[] }>;
  /** The transactions whose scan failed, and why (scanTransactions' errors). */
  refused: Array<{ txid: string; error: Error }>;
}

/** A transaction for {@link Receiver.scanTransactions}. */
export interface TransactionToScan {
  inputs: readonly ScanInput[];
  outputs: readonly ScanOutput[];
}

interface Candidate<P> {
  output: ScanOutput;
  /** top 48 bits of the output's x (script bytes 2..7), the cheap pre-filter of comparisons. */
  key: number;
  /** the output key lifted to a point, once needed (many-label search). */
  lifted?: P | null;
}

/**
 * Relative costs of the point operations of one k, in microseconds of libsecp256k1's public
 * calls (the wasm backend runs the same library; noble's ratios are alike): every call that
 * returns a point pays a field inversion to serialise it, a lift a square root.
 */
const COST = {
  /** t·G. */
  baseMul: 29,
  /** B_spend + t·G. */
  addTweak: 35,
  /** a + b. */
  add: 9,
  /** lift_x (a square root). */
  liftX: 7,
} as const;

type Strategy = 'labels' | 'outputs';

/** Packed transactions given to scanTransactions at once where the backend cannot read them itself. */
const PACKED_RUN = 64;

/**
 * The cheaper way to look for P_k (and P_k + L_m for every label) among `outputs` outputs,
 * `unlifted` of them not yet lifted to points (both give the same answer):
 * - `labels`: P_k = B_spend + t_k·G, then P_k + L_m per label, each looked up among the outputs;
 * - `outputs`: T = t_k·G, then output − T and output + T per output looked up among the spend
 *   keys B_m (BIP-352's footnote on many labels): a cost independent of the number of labels.
 */
function chooseStrategy(labels: number, outputs: number, unlifted: number, everySpendKeyFinite: boolean): Strategy {
  // B_m = ∞ (L_m = −B_spend, negligible probability) is not a point the table can hold
  if (!everySpendKeyFinite) return 'labels';
  const viaLabels = COST.addTweak + labels * COST.add;
  const viaOutputs = COST.baseMul + unlifted * COST.liftX + 2 * outputs * COST.add;
  return viaLabels <= viaOutputs ? 'labels' : 'outputs';
}

/**
 * Creates a receiver for one (b_scan, B_spend) pair (BIP-352 "Receiver", "Scanning").
 *
 * Cost per transaction: the input keys are summed (one call, from their compressed bytes),
 * input_hash·b_scan is computed as a scalar first so the ECDH is one variable-base
 * multiplication, then for each k the cheaper of two searches ({@link chooseStrategy}): with
 * few labels, P_k and P_k + L_m looked up among the outputs; with many labels, output ∓ T looked
 * up among the spend keys (the BIP's footnote on precomputed labels). The native backend does
 * all of it in one call of its transaction scanner (native/scan.c). Points stay in the backend's own form; outputs and labels are compared
 * on the top 48 bits of x first. Scanning stops at k = K_max (BIP-352 v1.1).
 * @throws {TypeError|RangeError} on malformed keys or labels; {SilentPaymentError}
 *   `BACKEND_UNAVAILABLE` when no backend is given and the native one cannot be loaded.
 */
export function createReceiver<P>(options: ReceiverOptions<P>): Receiver {
  const { scanPriv, spendPub } = options;
  assertBytes(scanPriv, 'scanPriv', 32);
  assertBytes(spendPub, 'spendPub', 33);
  assertValidScalar(scanPriv, 'scanPriv');
  // The default backend's point type is its own: `any` here, which P then is.
  const backend: Secp256k1Backend<P> = options.backend ?? loadSecp256k1Backend();
  const spendPoint = backend.pointFromCompressed(spendPub);
  if (spendPoint === null) throw new TypeError('"spendPub" is not a valid compressed secp256k1 point');
  const spend: P = spendPoint;
  const scanKey = scanPriv.slice();
  // the native backend scans a whole transaction in one call; the others go step by step below
  const txScanner = backend.createTransactionScanner?.(scanKey, spend);
  const labels = createLabelTable(backend, spend, spendPub, txScanner);
  labels.add(scanKey, 0); // BIP-352: always scan for the change label
  for (const m of options.labels ?? []) labels.add(scanKey, m);
  const state: ReceiverState<P> = { backend, spend, scanKey, txScanner, labels };

  return {
    addLabel: (m) => labels.add(scanKey, m),
    labels: () => labels.list(),
    backendName: backend.name,
    scanTransaction(inputs, outputs) {
      assertTransaction(inputs, outputs);
      return scanOne(state, inputs, outputs);
    },
    scanTransactions(txs) {
      if (!Array.isArray(txs)) throw new TypeError('"txs" expected an array of { inputs, outputs }');
      return scanAll(state, txs);
    },
    scanPacked(jobs) {
      if (!(jobs instanceof Uint8Array)) throw new TypeError('"jobs" expected a Uint8Array of packed transactions');
      return txScanner?.scanPacked ? scanPackedWhole(state, txScanner, jobs) : scanPackedByParts(state, jobs);
    },
    scanTweaks(rows) {
      if (!Array.isArray(rows)) throw new TypeError('"rows" expected an array of { tweak, outputs }');
      return scanTweakRows(state, rows);
    },
  };
}

/** What a receiver holds: its keys, its backend (and the backend's transaction scanner, if any), its labels. */
interface ReceiverState<P> {
  readonly backend: Secp256k1Backend<P>;
  readonly spend: P;
  readonly scanKey: Uint8Array;
  readonly txScanner: TransactionScanner<P> | undefined;
  readonly labels: LabelTable<P>;
}

/**
 * What the backend's transaction scanner needs of a transaction: its eligible input keys, the
 * smallest outpoint and its taproot outputs' x-only keys; null when it cannot pay anyone.
 */
function scanJob(inputs: readonly ScanInput[], outputs: readonly ScanOutput[]): { job: TransactionScanJob; taproot: ScanOutput[] } | null {
  const taproot: ScanOutput[] = [];
  for (const output of outputs) if (isP2tr(output.script)) taproot.push(output);
  if (taproot.length === 0) return null;
  const keys = eligibleInputKeys(inputs);
  if (keys === null) return null;
  const keyBytes = new Uint8Array(33 * keys.length);
  keys.forEach((key, i) => keyBytes.set(key, 33 * i));
  const xs = new Uint8Array(32 * taproot.length);
  taproot.forEach((output, i) => xs.set(output.script.subarray(2, 34), 32 * i));
  return { job: { keys: keyBytes, outpoint: smallestOutpoint(inputs), xs }, taproot };
}

/** The scanner's matches as found outputs. */
function foundOf<P>(state: ReceiverState<P>, taproot: ScanOutput[], matches: TransactionMatch[] | null): FoundOutput[] {
  if (matches === null) return [];
  return matches.map(({ position, k, labelSlot, tk }) => {
    const output = taproot[position] as ScanOutput;
    return found(state, output, k, tk, labelSlot < 0 ? null : state.labels.m(labelSlot));
  });
}

/** The same scan as {@link scanTransaction}, the curve work done by the backend in one call. */
function scanWhole<P>(
  state: ReceiverState<P>,
  scanner: TransactionScanner<P>,
  inputs: readonly ScanInput[],
  outputs: readonly ScanOutput[],
): FoundOutput[] {
  const prepared = scanJob(inputs, outputs);
  if (prepared === null) return [];
  const { keys, outpoint, xs } = prepared.job;
  return foundOf(state, prepared.taproot, scanner.scan(keys, outpoint, xs, K_MAX));
}

/** Many transactions, with one call of the backend's scanner for all those it has to scan. */
function scanMany<P>(
  state: ReceiverState<P>,
  scanner: TransactionScanner<P>,
  txs: readonly TransactionToScan[],
): Array<FoundOutput[] | Error> {
  const answers: Array<FoundOutput[] | Error> = new Array<FoundOutput[] | Error>(txs.length);
  const jobs: TransactionScanJob[] = [];
  const pending: Array<{ at: number; taproot: ScanOutput[] }> = [];
  txs.forEach((tx, at) => {
    try {
      assertTransaction(tx.inputs, tx.outputs);
      const prepared = scanJob(tx.inputs, tx.outputs);
      if (prepared === null) answers[at] = [];
      else {
        jobs.push(prepared.job);
        pending.push({ at, taproot: prepared.taproot });
      }
    } catch (err) {
      answers[at] = asError(err);
    }
  });
  if (jobs.length === 0) return answers;
  scanner.scanMany(jobs, K_MAX).forEach((matches, i) => {
    const { at, taproot } = pending[i]!;
    answers[at] = matches instanceof Error ? matches : foundOf(state, taproot, matches);
  });
  return answers;
}

/** Packed transactions, read and scanned by the backend's scanner in one call. */
function scanPackedWhole<P>(state: ReceiverState<P>, scanner: TransactionScanner<P>, jobs: Uint8Array): PackedScan {
  const result: PackedScan = { hits: [], refused: [] };
  for (const { offset, answer } of scanner.scanPacked!(jobs, K_MAX)) {
    const { tx } = readPackedTransaction(jobs, offset);
    if (answer instanceof Error) {
      result.refused.push({ txid: tx.txid, error: answer });
      continue;
    }
    // the scanner's positions count the taproot outputs, in packed order
    const taproot: ScanOutput[] = [];
    const values: number[] = [];
    tx.outputs.forEach((output, i) => {
      if (!isP2tr(output.script)) return;
      taproot.push(output);
      values.push(tx.values[i]!);
    });
    const found = foundOf(state, taproot, answer);
    if (found.length > 0) result.hits.push({ txid: tx.txid, found, values: answer.map((m) => values[m.position]!) });
  }
  return result;
}

/** Packed transactions read here, 64 at a time given to {@link scanTransactions}. */
function scanPackedByParts<P>(state: ReceiverState<P>, jobs: Uint8Array): PackedScan {
  const result: PackedScan = { hits: [], refused: [] };
  const txs = readPackedTransactions(jobs);
  for (let at = 0; at < txs.length; at += PACKED_RUN) {
    const run = txs.slice(at, at + PACKED_RUN);
    scanAll(state, run).forEach((found, i) => {
      const { txid, outputs, values } = run[i]!;
      if (found instanceof Error) result.refused.push({ txid, error: found });
      else if (found.length > 0)
        result.hits.push({ txid, found, values: found.map((f) => values[outputs.findIndex((o) => o.index === f.index)]!) });
    });
  }
  return result;
}

/** Each transaction's found outputs, or the error its scan threw. */
function scanAll<P>(state: ReceiverState<P>, txs: readonly TransactionToScan[]): Array<FoundOutput[] | Error> {
  if (state.txScanner) return scanMany(state, state.txScanner, txs);
  return txs.map((tx) => {
    try {
      assertTransaction(tx.inputs, tx.outputs);
      return scanOne(state, tx.inputs, tx.outputs);
    } catch (err) {
      return asError(err);
    }
  });
}

/** A row's outputs as P2TR outputs numbered by their position among the row's keys. */
function rowOutputs(row: TweakRow): ScanOutput[] {
  return row.outputs.map((xonly, index) => {
    const script = new Uint8Array(34);
    script[0] = 0x51;
    script[1] = 0x20;
    script.set(xonly, 2);
    return { index, script };
  });
}

/** Rows of a tweak index: by the backend's transaction scanner in one call, else step by step. */
function scanTweakRows<P>(state: ReceiverState<P>, rows: readonly TweakRow[]): Array<FoundOutput[] | Error> {
  for (const row of rows) {
    assertBytes(row?.tweak, 'tweak', 33);
    if (!Array.isArray(row.outputs)) throw new TypeError('"outputs" expected an array of 32-byte x-only keys');
    for (const x of row.outputs) assertBytes(x, 'output', 32);
  }
  const { txScanner, backend, scanKey } = state;
  if (txScanner) {
    const jobs = rows.map((row) => {
      const xs = new Uint8Array(32 * row.outputs.length);
      row.outputs.forEach((x, i) => xs.set(x, 32 * i));
      return { tweak: row.tweak, xs };
    });
    return txScanner.scanTweaks(jobs, K_MAX).map((matches, i) => {
      if (matches instanceof Error) return matches;
      return matches === null || matches.length === 0 ? [] : foundOf(state, rowOutputs(rows[i]!), matches);
    });
  }
  return rows.map((row) => {
    const tweak = backend.pointFromCompressed(row.tweak);
    if (tweak === null) return [];
    try {
      return searchOutputs(state, backend.toCompressed(backend.mul(tweak, scanKey)), rowOutputs(row));
    } catch (err) {
      return asError(err);
    }
  });
}

/** One transaction: by the backend's transaction scanner, else step by step. */
function scanOne<P>(state: ReceiverState<P>, inputs: readonly ScanInput[], outputs: readonly ScanOutput[]): FoundOutput[] {
  if (state.txScanner) return scanWhole(state, state.txScanner, inputs, outputs);
  const { backend, scanKey } = state;
  if (!outputs.some((output) => isP2tr(output.script))) return [];
  const data = computeInputData<P>(backend, inputs);
  if (data === null) return [];
  // one variable-base multiplication: (input_hash · b_scan) · A
  const ecdh = backend.mul(data.sum, backend.scalarMul(data.inputHash, scanKey));
  return searchOutputs(state, backend.toCompressed(ecdh), outputs);
}

/** For k = 0, 1, … the outputs paying the receiver among the taproot ones of `outputs`, from the ECDH point (compressed). */
function searchOutputs<P>(state: ReceiverState<P>, ecdhBytes: Uint8Array, outputs: readonly ScanOutput[]): FoundOutput[] {
  const { backend, spend, labels } = state;
  // outputs_to_check: the taproot output keys
  const remaining: Candidate<P>[] = [];
  for (const output of outputs) {
    if (isP2tr(output.script)) remaining.push({ output, key: key48(output.script, 2) });
  }
  const result: FoundOutput[] = [];
  let unlifted = remaining.length;
  for (let k = 0; k < K_MAX && remaining.length > 0; k++) {
    const tk = taggedHash('BIP0352/SharedSecret', ecdhBytes, ser32(k));
    assertValidScalar(tk, 't_k');
    const strategy = chooseStrategy(labels.count(), remaining.length, unlifted, labels.everySpendKeyFinite());
    let match: { candidate: Candidate<P>; label: number | null } | undefined;
    if (strategy === 'outputs') {
      match = findByOutputs(state, backend.baseMul(tk), remaining);
      unlifted = 0;
      for (const c of remaining) if (c.lifted === undefined) unlifted++;
    } else {
      const pk = backend.addTweak(spend, tk);
      if (pk === null) break;
      const exact = lookupOutput(backend, pk, remaining);
      match = exact ? { candidate: exact, label: null } : findByLabels(state, pk, remaining);
    }
    if (match === undefined) break;
    const { candidate, label } = match;
    remaining.splice(remaining.indexOf(candidate), 1);
    if (candidate.lifted === undefined) unlifted--;
    result.push(found(state, candidate.output, k, tk, label));
  }
  return result;
}

/** A found output: its tweak is t_k, or t_k + the label's tweak (recomputed: labels keep no tweaks). */
function found<P>(
  { backend, scanKey }: ReceiverState<P>,
  output: ScanOutput,
  k: number,
  tk: Uint8Array,
  label: number | null,
): FoundOutput {
  return {
    index: output.index,
    xonly: bytesToHex(output.script.subarray(2, 34)),
    tweak: bytesToHex(label === null ? tk : backend.scalarAdd(tk, labelTweak(scanKey, label))),
    label,
    k,
  };
}

/** `labels`: P_k + L_m for each label, looked up among the outputs. */
function findByLabels<P>(
  { backend, labels }: ReceiverState<P>,
  pk: P,
  remaining: Candidate<P>[],
): { candidate: Candidate<P>; label: number } | undefined {
  for (let slot = 0; slot < labels.count(); slot++) {
    const sum = backend.add(pk, labels.point(slot));
    if (sum === null) continue;
    const hit = lookupOutput(backend, sum, remaining);
    if (hit) return { candidate: hit, label: labels.m(slot) };
  }
  return undefined;
}

/**
 * `outputs`: with T = t_k·G, an output O (lifted with even y) is P_k + L_m = T + B_m when
 * O − T = B_m, and is its negation when O + T = −B_m (BIP-352's footnote on many labels, with
 * T instead of P_k so that B_spend itself is one more entry of the table: two additions per
 * output, whatever the number of labels). Unlabelled matches over all outputs come first.
 */
function findByOutputs<P>(
  { backend, labels }: ReceiverState<P>,
  t: P,
  remaining: Candidate<P>[],
): { candidate: Candidate<P>; label: number | null } | undefined {
  const negT = backend.negate(t);
  let labelled: { candidate: Candidate<P>; label: number | null } | undefined;
  for (const candidate of remaining) {
    if (candidate.lifted === undefined) candidate.lifted = backend.liftX(candidate.output.script.subarray(2, 34));
    if (candidate.lifted === null) continue; // not an x on the curve: pays no one
    const sum = backend.add(candidate.lifted, t);
    const diff = backend.add(candidate.lifted, negT);
    let hit = diff === null ? undefined : labels.findSpendKey(diff, false);
    if (hit === undefined || hit.label !== null) {
      const negatedHit = sum === null ? undefined : labels.findSpendKey(sum, true);
      if (hit === undefined || negatedHit?.label === null) hit = negatedHit;
    }
    if (hit === undefined) continue;
    if (hit.label === null) return { candidate, label: null };
    labelled ??= { candidate, label: hit.label };
  }
  return labelled;
}

/** The remaining output whose x is the point's, if any (the top 48 bits first). */
function lookupOutput<P>(backend: Secp256k1Backend<P>, point: P, remaining: Candidate<P>[]): Candidate<P> | undefined {
  const key = backend.xKey(point);
  for (const candidate of remaining) {
    if (candidate.key === key && backend.xEquals(point, candidate.output.script, 2)) return candidate;
  }
  return undefined;
}

/** The arguments of a transaction's scan: arrays (what is inside them, the scan checks). */
function assertTransaction(inputs: unknown, outputs: unknown): void {
  if (!Array.isArray(inputs)) throw new TypeError('"inputs" expected an array of ScanInput');
  if (!Array.isArray(outputs)) throw new TypeError('"outputs" expected an array of ScanOutput');
}

/** What was thrown, as an Error (scanTransactions returns it in the transaction's place). */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
