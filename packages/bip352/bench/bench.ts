import { handleCommandLine, packageVersion } from '@repo/config';
/**
 * `npm run bench`: scanned transactions per second on one core, for transactions with 2 eligible
 * inputs (one P2TR key-path, one P2WPKH) and 2 taproot outputs that do not pay the receiver (the
 * common case of a scan), with the change label only and with 1,000 labels. Next to each figure:
 * a tight loop replaying exactly the elliptic-curve calls that the scan made on the same backend
 * (recorded from the scan itself, arguments precomputed), measured in the same run, and the ratio.
 * Writes the table to bench-report.md in the package folder.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { BACKEND_NAMES, type AnySecp256k1Backend, type BackendName } from '../src/backend';
import { isBackendAvailable, loadSecp256k1Backend } from '../src/load-backend';
import { loadScanAddon } from '../src/backends/native';
import { createReceiver } from '../src/receiver';
import { packTransactions } from '../src/packed';
import { createSilentPaymentOutputs } from '../src/sender';
import { encodeSilentPaymentAddress } from '../src/address';
import { K_MAX } from '../src/constants';
import { labelTweak } from '../src/tweak';
import { smallestOutpoint, type ScanInput, type ScanOutput } from '../src/inputs';
import { eligibleInputKeys } from '../src/tweak';

const TX_COUNT = 256;
const ROUNDS = 8;
const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 150);
const TARGET_TX_PER_S = 10_000;
const TARGET_RATIO = 0.8;

/** The EC operations of the backend interface; byte helpers (xKey, toCompressed, …) are not EC work. */
const EC_METHODS = [
  'pointFromCompressed',
  'sumCompressed',
  'liftX',
  'add',
  'sum',
  'negate',
  'mul',
  'addTweak',
  'baseMul',
  'scalarMul',
  'scalarAdd',
  'scalarNegate',
] as const;

interface Tx {
  inputs: ScanInput[];
  outputs: ScanOutput[];
}

function seeded(label: string, i: number): Uint8Array {
  return createHash('sha256').update(`${label}/${i}`).digest();
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/**
 * Deterministic transactions (valid keys, random-looking signatures): a P2TR key-path and a
 * P2WPKH input, or with `oneInput` the P2WPKH input alone (the shape of most transactions).
 */
function buildTransactions(noble: AnySecp256k1Backend, oneInput = false): Tx[] {
  const txs: Tx[] = [];
  for (let i = 0; i < TX_COUNT; i++) {
    const trKey = noble.toXOnly(noble.baseMul(seeded('tr', i)));
    const wpkhKey = noble.toCompressed(noble.baseMul(seeded('wpkh', i)));
    const inputs: ScanInput[] = [
      {
        txid: hex(seeded('txid-a', i)),
        vout: i % 3,
        scriptSig: new Uint8Array(0),
        witness: [new Uint8Array(64).fill(7)],
        prevoutScript: Uint8Array.from([0x51, 0x20, ...trKey]),
      },
      {
        txid: hex(seeded('txid-b', i)),
        vout: 1,
        scriptSig: new Uint8Array(0),
        witness: [new Uint8Array(71).fill(9), wpkhKey],
        prevoutScript: Uint8Array.from([0x00, 0x14, ...seeded('h160', i).subarray(0, 20)]),
      },
    ];
    const outputs: ScanOutput[] = [0, 1].map((n) => ({
      index: n,
      script: Uint8Array.from([0x51, 0x20, ...noble.toXOnly(noble.baseMul(seeded(`out${n}`, i)))]),
    }));
    txs.push({ inputs: oneInput ? inputs.slice(1) : inputs, outputs });
  }
  return txs;
}

/** A backend that records every EC call (method and arguments) made through it. */
function recording(backend: AnySecp256k1Backend, log: [string, unknown[]][]): AnySecp256k1Backend {
  const proxy: Record<string, unknown> = { ...backend };
  for (const method of EC_METHODS) {
    const fn = (backend as unknown as Record<string, (...args: unknown[]) => unknown>)[method]!;
    proxy[method] = (...args: unknown[]) => {
      log.push([method, args.map((a) => (Array.isArray(a) ? [...a] : a))]);
      return fn.apply(backend, args);
    };
  }
  return proxy as unknown as AnySecp256k1Backend;
}

/**
 * Runs `body` over and over for about `ms` of wall time and returns iterations per second of
 * this process's CPU time (body does `unit` per call), and per second of wall time. CPU time is
 * the figure of merit: the machine's cores are shared, and time spent waiting for a core is not
 * the cost of a scan on one core; the wall-clock rate is printed beside it.
 */
function rate(ms: number, unit: number, body: () => void): { cpu: number; wall: number } {
  let iterations = 0;
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  const limit = BigInt(ms) * 1_000_000n;
  let elapsed: bigint;
  do {
    body();
    iterations += unit;
    elapsed = process.hrtime.bigint() - start;
  } while (elapsed < limit);
  const cpu = process.cpuUsage(cpuStart);
  return { cpu: iterations / ((cpu.user + cpu.system) / 1e6), wall: iterations / (Number(elapsed) / 1e9) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/**
 * Three rounds that bracket one receiver with the other, in turn (even rounds: change only,
 * labelled, change only; odd rounds: labelled, change only, labelled), so that neither the
 * machine's drift over the three nor what the round before them left in the caches counts for or
 * against the labels. Pushes the labels' cost (the labelled time over the change-only time, the
 * bracketing pair's mean, less one) to `costs`; returns the labelled receiver's first round.
 */
function pairedRounds(
  round: number,
  changeOnly: () => void,
  labelled: () => void,
  unit: number,
  costs: number[],
): { cpu: number; wall: number } {
  const time = (r: { cpu: number }) => 1 / r.cpu;
  if (round % 2 === 0) {
    const before = rate(ROUND_MS, unit, changeOnly);
    const scan = rate(ROUND_MS, unit, labelled);
    const after = rate(ROUND_MS, unit, changeOnly);
    costs.push(time(scan) / ((time(before) + time(after)) / 2) - 1);
    return scan;
  }
  const first = rate(ROUND_MS, unit, labelled);
  const reference = rate(ROUND_MS, unit, changeOnly);
  const second = rate(ROUND_MS, unit, labelled);
  costs.push((time(first) + time(second)) / 2 / time(reference) - 1);
  return first;
}

/** 'change only', or 'change + 1,000'. */
function labelName(labelCount: number): string {
  return labelCount === 0 ? 'change only' : `change + ${labelCount.toLocaleString('en-US')}`;
}

interface Row {
  backend: BackendName;
  /** '' for the bench's 2-input transactions, ' (1 input)' for the one-input ones. */
  shape: string;
  labels: string;
  labelCount: number;
  scan: number;
  /** scan rate per second of wall-clock time: min–max over the rounds. */
  scanWall: [number, number];
  /** scan rate per second of CPU time: min–max over the rounds. */
  scanRange: [number, number];
  tight: number;
  ratio: number;
  /**
   * With labels: the time a scan takes over a change-only receiver's on the same transactions,
   * the median of the ratios of rounds run one after the other (so both see the same machine).
   */
  labelCost?: number;
  /** The same cost with both receivers called as the silent-payment service does: scanTransactions, MANY_RUN a call (native). */
  labelCostMany?: number;
  callsPerTx: string;
}

/** The step-by-step scan's EC calls, recorded from one scan of each transaction, ready to replay. */
function recordedCalls(
  backend: AnySecp256k1Backend,
  scanPriv: Uint8Array,
  spendPub: Uint8Array,
  labels: number[],
  txs: Tx[],
): { calls: (() => unknown)[]; callsPerTx: string } {
  const log: [string, unknown[]][] = [];
  const recorder = createReceiver({ scanPriv, spendPub, labels, backend: recording(backend, log) });
  log.length = 0; // label precomputation is setup, not scanning
  for (const tx of txs) if (recorder.scanTransaction(tx.inputs, tx.outputs).length !== 0) throw new Error('unexpected match');
  const calls = log.map(([method, args]) => {
    const fn = (backend as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!;
    return () => fn.apply(backend, args);
  });
  const counts = new Map<string, number>();
  for (const [method] of log) counts.set(method, (counts.get(method) ?? 0) + 1);
  return { calls, callsPerTx: [...counts].map(([m, c]) => `${m}×${+(c / txs.length).toFixed(2)}`).join(', ') };
}

/**
 * A backend that scans a whole transaction in one call (native): the tight loop is that call on
 * the same arguments with every hash replaced by a constant (`ecOnly`), i.e. exactly the scan's
 * elliptic-curve work, without input parsing, hashing or JavaScript around it.
 */
function wholeTransactionCalls(
  backend: AnySecp256k1Backend,
  scanPriv: Uint8Array,
  spendPub: Uint8Array,
  labels: number[],
  txs: Tx[],
  oneInput: boolean,
): { calls: (() => unknown)[]; callsPerTx: string } {
  const spend = backend.pointFromCompressed(spendPub);
  const scanner = backend.createTransactionScanner!(scanPriv, spend);
  scanner.addSpendKey(backend.add(spend, backend.baseMul(labelTweak(scanPriv, 0))), 0);
  labels.forEach((m, i) => scanner.addSpendKey(backend.add(spend, backend.baseMul(labelTweak(scanPriv, m))), i + 1));
  const calls = txs.map((tx) => {
    const keys = Buffer.concat(eligibleInputKeys(tx.inputs)!);
    const outpoint = smallestOutpoint(tx.inputs);
    const xs = Buffer.concat(tx.outputs.map((output) => output.script.subarray(2, 34)));
    return () => scanner.scan(keys, outpoint, xs, K_MAX, true);
  });
  const keys =
    labels.length === 0
      ? 'x(T + B) against each output for B_spend, B_0'
      : `x(O − T) and x(O + T) looked up among the ${(labels.length + 1).toLocaleString('en-US')} spend keys (one divsteps inversion)`;
  if (oneInput) {
    return {
      calls,
      callsPerTx:
        labels.length === 0
          ? `one native call: the key's square root and the ECDH point's inversion in one exponentiation, 1 variable-base multiplication, t_0·G (comb), ${keys}`
          : `one native call: the key parsed (a square root), the first output lifted (an exponentiation), 1 variable-base multiplication, ECDH (1 inversion lifting the second output), t_0·G (comb), ${keys}`,
    };
  }
  const search = labels.length === 0 ? keys : `both outputs lifted within the inversions of A and the ECDH point, ${keys}`;
  return {
    calls,
    callsPerTx: `one native call: 2 key parses, A (1 inversion), 1 variable-base multiplication, ECDH (1 inversion), t_0·G (comb), ${search}`,
  };
}

function benchBackend(name: BackendName, txs: Tx[], labelCount: number, oneInput = false): Row {
  const backend = loadSecp256k1Backend(name);
  const scanPriv = seeded('scan', 0);
  const spendPub = backend.toCompressed(backend.baseMul(seeded('spend', 0)));
  const labels = Array.from({ length: labelCount }, (_, i) => i + 1);

  const { calls, callsPerTx } = backend.createTransactionScanner
    ? wholeTransactionCalls(backend, scanPriv, spendPub, labels, txs, oneInput)
    : recordedCalls(backend, scanPriv, spendPub, labels, txs);

  const receiver = createReceiver({ scanPriv, spendPub, labels, backend });
  const scanAll = (): void => {
    for (const tx of txs) receiver.scanTransaction(tx.inputs, tx.outputs);
  };
  // the cost of the labels: a change-only receiver's rounds paired with this one's (rows measured
  // one after the other drift apart by more than the cost on a shared machine)
  const changeOnly = labelCount === 0 ? undefined : createReceiver({ scanPriv, spendPub, labels: [], backend });
  const scanChangeOnly = (): void => {
    for (const tx of txs) changeOnly!.scanTransaction(tx.inputs, tx.outputs);
  };
  const replayAll = (): void => {
    for (const call of calls) call();
  };
  // native: the same two receivers called as the silent-payment service's workers call them
  const inRuns = (r: ReturnType<typeof createReceiver>) => (): void => {
    for (let at = 0; at < txs.length; at += MANY_RUN) r.scanTransactions(txs.slice(at, at + MANY_RUN));
  };
  const many = name === 'native' && changeOnly !== undefined ? { labelled: inRuns(receiver), changeOnly: inRuns(changeOnly) } : undefined;
  const costsMany: number[] = [];
  // noble is ~100x slower: time-bounded rounds over a slice keep the run short
  // alternate short rounds so both see the same machine; the ratio is the median of paired ratios
  const scanRates: number[] = [];
  const scanWallRates: number[] = [];
  const tightRates: number[] = [];
  const ratios: number[] = [];
  const costs: number[] = [];
  scanAll(); // warm up
  replayAll();
  if (changeOnly !== undefined) scanChangeOnly();
  for (let round = 0; round < ROUNDS; round++) {
    // the labels' cost: see pairedRounds
    const scan =
      changeOnly !== undefined ? pairedRounds(round, scanChangeOnly, scanAll, txs.length, costs) : rate(ROUND_MS, txs.length, scanAll);
    const tight = rate(ROUND_MS, txs.length, replayAll);
    scanRates.push(scan.cpu);
    scanWallRates.push(scan.wall);
    tightRates.push(tight.cpu);
    ratios.push(scan.cpu / tight.cpu);
    if (many !== undefined) pairedRounds(round, many.changeOnly, many.labelled, txs.length, costsMany);
  }
  const shape = oneInput ? ' (1 input)' : '';
  return {
    backend: name,
    shape,
    labels: `${labelName(labelCount)}${shape}`,
    labelCount,
    scan: median(scanRates),
    scanRange: [Math.min(...scanRates), Math.max(...scanRates)],
    scanWall: [Math.min(...scanWallRates), Math.max(...scanWallRates)],
    tight: median(tightRates),
    ratio: median(ratios),
    labelCost: costs.length === 0 ? undefined : median(costs),
    labelCostMany: costsMany.length === 0 ? undefined : median(costsMany),
    callsPerTx,
  };
}

/** Transactions a scanTransactions call gets in benchMany: what the silent-payment service's scan workers pass. */
const MANY_RUN = 64;

interface ManyRow {
  shape: string;
  one: number;
  many: number;
  ratio: number;
  range: [number, number];
  /** scanPacked of the same transactions packed (tx/s CPU), and its paired ratio to the runs. */
  packed: number;
  packedRatio: number;
  packedRange: [number, number];
}

/**
 * Native, change label: the same transactions scanned one by one (`scanTransaction`) and in runs
 * of MANY_RUN (`scanTransactions`, whose native scanner shares the inversions of 8 and multiplies
 * them at once where the CPU has AVX-512 IFMA), in alternating rounds; the figure is the median of
 * the paired rate ratios.
 */
function benchMany(txs: Tx[], shape: string): ManyRow {
  const backend = loadSecp256k1Backend('native');
  const scanPriv = seeded('scan', 0);
  const spendPub = backend.toCompressed(backend.baseMul(seeded('spend', 0)));
  const receiver = createReceiver({ scanPriv, spendPub, backend });
  const oneByOne = (): void => {
    for (const tx of txs) receiver.scanTransaction(tx.inputs, tx.outputs);
  };
  const inRuns = (): void => {
    for (let at = 0; at < txs.length; at += MANY_RUN) receiver.scanTransactions(txs.slice(at, at + MANY_RUN));
  };
  // packed, as packBlockAnswer gives a block's transactions: what the service's workers scan
  const jobs = packTransactions(
    txs.map((tx, i) => ({ txid: hex(seeded('txid', i)), inputs: tx.inputs, outputs: tx.outputs, values: tx.outputs.map(() => 0) })),
  );
  const packed = (): void => {
    receiver.scanPacked(jobs);
  };
  const answers = txs.map((tx) => receiver.scanTransaction(tx.inputs, tx.outputs));
  const same = JSON.stringify(answers);
  if (JSON.stringify(receiver.scanTransactions(txs)) !== same) throw new Error('scanTransactions differs from scanTransaction');
  const { hits, refused } = receiver.scanPacked(jobs);
  if (hits.length + refused.length !== answers.filter((a) => a.length > 0).length)
    throw new Error('scanPacked differs from scanTransaction');
  oneByOne(); // warm up
  inRuns();
  packed();
  const ones: number[] = [];
  const manys: number[] = [];
  const ratios: number[] = [];
  const packs: number[] = [];
  const packedRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const first = round % 2 === 0 ? rate(ROUND_MS, txs.length, oneByOne) : undefined;
    const firstPacked = round % 2 === 1 ? rate(ROUND_MS, txs.length, packed) : undefined;
    const many = rate(ROUND_MS, txs.length, inRuns);
    const one = first ?? rate(ROUND_MS, txs.length, oneByOne);
    const pack = firstPacked ?? rate(ROUND_MS, txs.length, packed);
    ones.push(one.cpu);
    manys.push(many.cpu);
    ratios.push(many.cpu / one.cpu);
    packs.push(pack.cpu);
    packedRatios.push(pack.cpu / many.cpu);
  }
  return {
    shape,
    one: median(ones),
    many: median(manys),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)],
    packed: median(packs),
    packedRatio: median(packedRatios),
    packedRange: [Math.min(...packedRatios), Math.max(...packedRatios)],
  };
}

const KMAX_ROUNDS = 7;

interface KmaxRow {
  labels: string;
  ms: number;
  range: [number, number];
}

/** The worst case a receiver meets: K_max outputs of one transaction, all its own (native backend). */
function benchKmax(labelCount: number): KmaxRow {
  const native = loadSecp256k1Backend('native');
  const scanPriv = seeded('scan', 0);
  const spendPriv = seeded('spend', 0);
  const spendPub = native.toCompressed(native.baseMul(spendPriv));
  const scanPub = native.toCompressed(native.baseMul(scanPriv));
  const address = encodeSilentPaymentAddress(scanPub, spendPub, 'signet');
  const d = seeded('kmax-input', 0);
  const input = {
    txid: hex(seeded('kmax-txid', 0)),
    vout: 0,
    privateKey: d,
    scriptSig: new Uint8Array(0),
    witness: [new Uint8Array(71).fill(9), native.toCompressed(native.baseMul(d))],
    prevoutScript: Uint8Array.from([0x00, 0x14, ...seeded('kmax-h160', 0).subarray(0, 20)]),
  };
  const paid = createSilentPaymentOutputs(
    [input],
    Array.from({ length: K_MAX }, () => address),
    { backend: native },
  );
  const outputs: ScanOutput[] = [...paid.values()].flat().map((x, index) => ({ index, script: Uint8Array.from([0x51, 0x20, ...x]) }));
  const labels = Array.from({ length: labelCount }, (_, i) => i + 1);
  const receiver = createReceiver({ scanPriv, spendPub, labels, backend: native });
  if (receiver.scanTransaction([input], outputs).length !== K_MAX) throw new Error('K_max: not every output found');
  const times: number[] = [];
  for (let round = 0; round < KMAX_ROUNDS; round++) {
    const cpu = process.cpuUsage();
    receiver.scanTransaction([input], outputs);
    const used = process.cpuUsage(cpu);
    times.push((used.user + used.system) / 1000);
  }
  return {
    labels: labelName(labelCount),
    ms: median(times),
    range: [Math.min(...times), Math.max(...times)],
  };
}

interface MemoryRow {
  backend: BackendName;
  labels: number;
  heapPerLabel: number;
  rssPerLabel: number;
}

/**
 * Memory a receiver holds per label: heap (JavaScript objects and buffers) and resident (the
 * native table too), measured by bench/memory.cjs in a new process (at the end of this run the
 * process's resident size moved with what the benchmarks before had freed: it gave negative
 * figures).
 */
function benchMemory(name: BackendName, labelCount: number): MemoryRow {
  const child = spawnSync(process.execPath, ['--expose-gc', join(__dirname, 'memory.cjs'), name, String(labelCount)], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`the memory measurement of ${name} failed: ${child.stderr.trim() || `exit ${child.status}`}`);
  return JSON.parse(child.stdout) as MemoryRow;
}

function main(): void {
  // BENCH_BACKENDS=native (comma-separated) measures only those
  const wanted = process.env['BENCH_BACKENDS']?.split(',').map((n) => n.trim());
  const names: BackendName[] = BACKEND_NAMES.filter((n) => (wanted === undefined || wanted.includes(n)) && isBackendAvailable(n));
  const noble = loadSecp256k1Backend('noble');
  const all = buildTransactions(noble);
  const rows: Row[] = [];
  const kmax: KmaxRow[] = [];
  const many: ManyRow[] = [];
  for (const name of names) {
    const txs = name === 'noble' ? all.slice(0, 16) : all;
    const runs: { txs: Tx[]; oneInput: boolean; labelCounts: number[] }[] =
      name === 'native'
        ? [
            // 100,000 labels: precomputing them takes minutes on wasm and noble, so native only
            { txs, oneInput: false, labelCounts: [0, 1000, 100_000] },
            // one-input transactions: no inversion for A, and the key's square root rides on the
            // ECDH point's inversion, which the change-only path keeps and the label search cannot
            { txs: buildTransactions(noble, true), oneInput: true, labelCounts: [0, 1000] },
          ]
        : [{ txs, oneInput: false, labelCounts: [0, 1000] }];
    for (const run of runs) {
      for (const labelCount of run.labelCounts) {
        const row = benchBackend(name, run.txs, labelCount, run.oneInput);
        rows.push(row);
        console.error(`${name} ${row.labels}: scan ${row.scan.toFixed(0)} tx/s, tight loop ${row.tight.toFixed(0)} tx/s`);
      }
    }
    if (name === 'native') {
      for (const [shape, oneInput] of [
        ['2 inputs', false],
        ['1 input', true],
      ] as const) {
        const row = benchMany(buildTransactions(noble, oneInput), shape);
        many.push(row);
        console.error(
          `native, ${shape}: one by one ${row.one.toFixed(0)} tx/s, in runs of ${MANY_RUN} ${row.many.toFixed(0)} tx/s (${row.ratio.toFixed(2)}), packed ${row.packed.toFixed(0)} tx/s (${row.packedRatio.toFixed(2)} of the runs)`,
        );
      }
      for (const labelCount of [0, 1000, 100_000]) {
        const row = benchKmax(labelCount);
        kmax.push(row);
        console.error(`native K_max, ${row.labels}: ${row.ms.toFixed(1)} ms a scan`);
      }
    }
  }
  const memory: MemoryRow[] = [];
  for (const name of names) {
    // noble takes ~0.1 ms a label to precompute: 10,000 for it
    const row = benchMemory(name, name === 'native' ? 100_000 : 10_000);
    memory.push(row);
    console.error(
      `${name}, ${row.labels} labels: ${row.heapPerLabel.toFixed(0)} B of heap, ${row.rssPerLabel.toFixed(0)} B resident a label`,
    );
  }
  const cost = (r: Row): string => (r.labelCost === undefined ? '—' : `${(r.labelCost * 100).toFixed(1)} %`);
  const costMany = (r: Row): string => (r.labelCostMany === undefined ? '—' : `${(r.labelCostMany * 100).toFixed(1)} %`);
  const [l1, l5] = loadavg();
  const lines = [
    '# BIP-352 scan benchmark',
    '',
    `Node ${process.version}, one core (one thread), ${new Date().toISOString()}, load average ${l1?.toFixed(2)} / ${l5?.toFixed(2)} (1 / 5 min) on ${require('node:os').cpus().length} cores shared with other work.`,
    `Transactions: 2 eligible inputs (P2TR key path + P2WPKH), 2 taproot outputs not paying the receiver (native also with the P2WPKH input alone: "(1 input)", the shape of most transactions, where labels cost more; see the package README, "Figures"); ${TX_COUNT} distinct transactions (16 for noble), rates per second of process CPU time (the cores are shared), median of ${ROUNDS} alternating rounds of ${ROUND_MS} ms, with the range over the rounds in CPU time and in wall-clock time; the ratio is the median of the paired round ratios.`,
    "Tight loop, in the same run on the same backend: for native, the same whole-transaction call on the same arguments with every hash replaced by a constant (exactly the scan's elliptic-curve work, without eligibility, key extraction, hashing or JavaScript); for wasm and noble, the EC calls the step-by-step scan made, recorded from it and replayed. The ratio is the share of the scan's time spent in that EC work.",
    `Targets: ≥ ${TARGET_TX_PER_S.toLocaleString('en-US')} tx/s per core, scan ≥ ${TARGET_RATIO * 100} % of the tight loop.`,
    '',
    `| backend | labels | scan (tx/s CPU) | scan range (CPU) | scan range (wall clock) | cost of the labels (time vs change only, paired rounds) | the same in runs of ${MANY_RUN} (scanTransactions) | tight loop, same EC calls (tx/s CPU) | scan / tight | ≥ 10,000 tx/s | ≥ 80 % |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|:-:|:-:|',
    ...rows.map((r) => {
      const ratio = r.ratio;
      const n = (v: number): string => Math.round(v).toLocaleString('en-US');
      return `| ${r.backend} | ${r.labels} | ${n(r.scan)} | ${n(r.scanRange[0])}–${n(r.scanRange[1])} | ${n(r.scanWall[0])}–${n(r.scanWall[1])} | ${cost(r)} | ${costMany(r)} | ${n(r.tight)} | ${(ratio * 100).toFixed(1)} % | ${r.scan >= TARGET_TX_PER_S ? 'yes' : 'no'} | ${ratio >= TARGET_RATIO ? 'yes' : 'no'} |`;
    }),
    '',
    `Labels cost nothing extra when the cost column stays ≤ 10 %. Its reference is a change-only receiver on the same backend and transactions, its rounds bracketing the labelled row's in turn (change only, labelled, change only in one round; labelled, change only, labelled in the next; the bracketed time over the mean of the pair around it): the median of the ${ROUNDS} rounds' ratios. The change-only rows, measured seconds apart, can differ from it by more than the cost on a shared machine. The next column (native) pairs the same two receivers called ${MANY_RUN} transactions at a time (scanTransactions, as the silent-payment service's scan workers call it, eight multiplications at once where the CPU has AVX-512 IFMA).`,
    '',
    ...(many.length === 0
      ? []
      : [
          `Many transactions at once, native, change label: \`scanTransactions\` in runs of ${MANY_RUN} against \`scanTransaction\` one by one, the same transactions, alternating rounds (the ratio: the median of the paired ones). The native scanner takes them eight at a time and shares their inversions (one for the eight); this machine's scanner also multiplies and raises ${loadScanAddon().lanes() || 'one'} at a time (8: AVX-512 IFMA lanes; one: libsecp256k1's multiplication and exponentiation, no such instructions or BIP352_SCAN_LANES=0).`,
          '',
          `Packed: the same transactions packed as \`packBlockAnswer\` gives a block's, all of them in one \`scanPacked\` call (the inputs read in C: no object per input; what the silent-payment service's scan workers call), paired with the runs.`,
          '',
          '| transactions | one by one (tx/s CPU) | in runs (tx/s CPU) | in runs / one by one | range | packed (tx/s CPU) | packed / in runs | range |',
          '|---|---:|---:|---:|---:|---:|---:|---:|',
          ...many.map(
            (r) =>
              `| ${r.shape} | ${Math.round(r.one).toLocaleString('en-US')} | ${Math.round(r.many).toLocaleString('en-US')} | ${r.ratio.toFixed(2)} | ${r.range[0].toFixed(2)}–${r.range[1].toFixed(2)} | ${Math.round(r.packed).toLocaleString('en-US')} | ${r.packedRatio.toFixed(2)} | ${r.packedRange[0].toFixed(2)}–${r.packedRange[1].toFixed(2)} |`,
          ),
          '',
        ]),
    `K_max worst case, native: one transaction with ${K_MAX.toLocaleString('en-US')} taproot outputs all paying the receiver (k = 0 … ${K_MAX - 1}), time of one scan (CPU), median of ${KMAX_ROUNDS} scans, min–max beside it:`,
    '',
    '| labels | ms a scan (CPU) | range (ms) |',
    '|---|---:|---:|',
    ...kmax.map((r) => `| ${r.labels} | ${r.ms.toFixed(1)} | ${r.range[0].toFixed(1)}–${r.range[1].toFixed(1)} |`),
    '',
    'Memory a receiver holds per label, measured in a new process for each backend (after a full garbage collection; the label indexes passed in not counted). Heap: JavaScript objects and buffers; resident: the process, native tables included. The 32-bit label index itself is 4 bytes.',
    '',
    '| backend | labels | heap a label (bytes) | resident a label (bytes) |',
    '|---|---:|---:|---:|',
    ...memory.map(
      (r) =>
        `| ${r.backend} | ${r.labels.toLocaleString('en-US')} | ${r.heapPerLabel.toFixed(0)} | ${r.backend === 'native' ? r.rssPerLabel.toFixed(0) : '— (heap only)'} |`,
    ),
    '',
    'EC calls per transaction:',
    '',
    ...rows.map((r) => `- ${r.backend}, ${r.labels}: ${r.callsPerTx}`),
    '',
  ];
  const report = lines.join('\n');
  console.log(report);
  writeFileSync(join(__dirname, '..', 'bench-report.md'), report);
}

handleCommandLine({
  name: 'bip352-bench',
  version: packageVersion(join(__dirname, '..', 'package.json')),
  summary: 'measures BIP-352 scanning per secp256k1 backend and prints a Markdown report',
  usage: [''],
  env: [
    { name: 'BENCH_BACKENDS', default: 'every available one', description: 'comma-separated backends to measure: native, wasm, noble' },
    { name: 'BENCH_ROUND_MS', default: '150', description: 'length of one measured round (ms)' },
  ],
});
main();
