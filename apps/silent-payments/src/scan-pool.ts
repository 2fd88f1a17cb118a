import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BackendName, FoundOutput } from '@repo/bip352/scan';
import type { Logger } from '@repo/service';
import { ChainRpcError } from './chain-rpc';

/** What the scan of one block found: made by a worker from the node's answer, or by the scanner's own thread. */
export interface ScannedBlock {
  hash: string;
  height: number;
  previousblockhash: string | undefined;
  /** Transactions in the block. */
  nTx: number;
  /** The transactions paying us: their txid, what the receiver found, and the value (BTC) of each output found. */
  hits: Array<{ txid: string; found: FoundOutput[]; values: number[] }>;
  /** Every outpoint the block spends as a payment id `txid:vout`, each followed by the spending txid. */
  spends: string[];
  /** Transactions the library refused (they cannot pay us by BIP-352 rules), and why. */
  skipped: Array<{ txid: string; error: string }>;
}

/** A failure met by a worker reading the node's answer, rebuilt as a ChainRpcError on this thread. */
interface WorkerFailure {
  kind: 'rpc' | 'garbage';
  message: string;
  rpcCode?: number;
}

/** Elliptic-curve work of the scan on worker threads (docs/silent-payments.md, "Scanner"). */
export interface ScanPool {
  readonly size: number;
  /**
   * Parses a `getblock <hash> 3` answer (the raw envelope of the call `rpcId`, moved to the
   * worker without a copy: `body` is unusable here afterwards) and scans the block on a worker.
   * `more`: the node still has blocks to serve after this one (a catch-up, not at its last
   * block); while only such blocks are waiting, one worker fewer (at least one) runs at a time,
   * leaving a core to the node. Rejects with a ChainRpcError when the answer is a JSON-RPC error
   * or not a block.
   */
  scanBlock(rpcId: string, body: Uint8Array, more?: boolean): Promise<ScannedBlock>;
  /** Starts the workers now (loading the library takes a while), so the first block does not wait. */
  warm(): void;
  /** Scans for label m from now on (sent to every worker before any later job). */
  addLabel(m: number): void;
  /** Ends the workers (a later scan starts them again). */
  close(): Promise<void>;
}

/** Options of {@link createScanPool}. */
export interface ScanPoolOptions {
  /** Worker threads (SCAN_WORKERS). */
  workers: number;
  scanPriv: Uint8Array;
  spendPub: Uint8Array;
  /** Labels m scanned from the start. */
  labels: readonly number[];
  /** The `@repo/bip352` backend (SP_SECP256K1_BACKEND); undefined: its default. */
  backend?: BackendName | undefined;
  /**
   * Read blocks with `@repo/bip352`'s packBlockAnswer (native, from the bytes) and JSON.parse
   * only what it leaves (default true); false: JSON.parse every block (the tests compare the two).
   */
  nativeParse?: boolean;
  logger: Logger;
  /** Called as each job starts, with the number of workers then busy (the tests read it). */
  onJobStart?: (busy: number) => void;
}

/**
 * The default of SCAN_WORKERS: one worker a core. While the node still serves the blocks of a
 * catch-up, one of them waits (the pool's steady limit, at least one): the node then keeps a core
 * and the catch-up goes at its pace; the last block (and those still waiting before it) is
 * scanned by all of them, the node having nothing left to serve. On 2 cores without AVX-512,
 * once the inputs were read in C (`@repo/bip352` scanPacked), one worker took 2.2 s of CPU to
 * scan what the node served in 2.8, and two scanning throughout took the node's core: node alone
 * / catch-up 0.92 with one, 0.85 with two (apps/silent-payments README, "Catch-up against the
 * node's pace").
 */
export function defaultScanWorkers(): number {
  return availableParallelism();
}

// The worker: its own receiver from `@repo/bip352/scan` (the receiving side only: a worker starts
// on ~80 ms of CPU instead of ~110 with the whole package; the native scanner's tables are built
// once per process and shared by every thread), labels in the order the main thread sends them,
// one job at a time.
// Two kinds of job (docs/silent-payments.md, "Catching up"):
// - `parse`: a block as the node sent it (bytes moved here, not copied), read off the thread that
//   fetches the next blocks. What comes back is what the scanner stores (hash, height, the
//   outpoints spent) and the scan inputs of the transactions with a taproot output, packed in one
//   transferable buffer: about 300 bytes a transaction instead of the ~2.6 KB of its JSON.
//   `@repo/bip352`'s packBlockAnswer reads the bytes natively (no string of the body, no object
//   graph to collect); an answer it does not handle (an error, anything unexpected) goes through
//   parseBlock below: JSON.parse, then each transaction read by scanInputsFromRpc and
//   scanOutputsFromRpc, as the scanner reads it on its own thread (the same skips, in the same
//   words), and packed by PackedWriter.transaction. The two give the same result
//   (test/block-answer.test.ts, test/scan-pool.test.ts).
// - `scan`: a run of packed transactions, so every worker can take a share of one block (the last
//   block of a catch-up is then scanned by all of them at once), given to the receiver's
//   scanPacked as they are: with the native backend their inputs are read in C, no object per
//   input (`@repo/bip352` README, "Scanning packed transactions").
// Packed transaction (`@repo/bip352`'s format, its src/packed.ts; parseBlock writes it with the
// package's PackedWriter.transaction, the JavaScript writer behind packTransactions):
// txid (32) · inputs (u32) · outputs (u32) · per input: txid (32), vout (u32), scriptSig, witness
// items (u32 count, then each), prevout script · per taproot output: n (u32), value in BTC (f64),
// script (34); each byte string as its length (u32) then its bytes.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bip352 = require(workerData.bip352);
const receiver = bip352.createReceiver({
  scanPriv: workerData.scanPriv,
  spendPub: workerData.spendPub,
  labels: workerData.labels,
  backend: bip352.loadSecp256k1Backend(workerData.backend),
});
const garbage = (message) => ({ failure: { kind: 'garbage', message } });

// the packed form of the transactions parseBlock reads (the JavaScript writer of the format)
const packed = new bip352.PackedWriter(1 << 20);

function parseBlock(text, rpcId) {
  let envelope;
  try {
    envelope = JSON.parse(text);
  } catch {
    return garbage('chain node answered something that is not JSON-RPC');
  }
  if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope) || envelope.id !== rpcId) {
    return garbage('chain node answered something that is not JSON-RPC');
  }
  if (envelope.error !== null && envelope.error !== undefined) {
    const code = typeof envelope.error.code === 'number' ? envelope.error.code : -32603;
    const message = typeof envelope.error.message === 'string' ? envelope.error.message : 'unknown error';
    return { failure: { kind: 'rpc', message: 'getblock: ' + message, rpcCode: code } };
  }
  if (!('result' in envelope)) return { failure: { kind: 'rpc', message: 'getblock: answer without result', rpcCode: -32603 } };
  const block = envelope.result;
  if (block === null || typeof block !== 'object' || typeof block.hash !== 'string' || typeof block.height !== 'number' || !Array.isArray(block.tx)) {
    return garbage('getblock: the answer is not a block');
  }
  const spends = [];
  const skipped = [];
  const offsets = [];
  packed.rewind(0);
  for (const tx of block.tx) {
    const vin = tx.vin;
    for (const v of vin) if (typeof v.txid === 'string' && typeof v.vout === 'number') spends.push(v.txid + ':' + v.vout, tx.txid);
    if (!tx.vout.some((o) => bip352.isP2trHex(o.scriptPubKey.hex)) || vin.length === 0 || typeof vin[0].coinbase === 'string') continue;
    if (vin.some((v) => v.prevout === undefined)) {
      return garbage('transaction ' + tx.txid + ' comes without prevouts: the node must support getblock verbosity 3 (Bitcoin Core 25 or later)');
    }
    // read as the scanner reads it on its own thread (SCAN_WORKERS=0): a transaction that cannot
    // be read cannot pay us, and is skipped in the same words
    const start = packed.length;
    try {
      const inputs = bip352.scanInputsFromRpc(vin);
      const { outputs, values } = bip352.scanOutputsFromRpc(tx.vout);
      packed.transaction({ txid: tx.txid, inputs, outputs, values });
      offsets.push(start);
    } catch (err) {
      packed.rewind(start);
      skipped.push({ txid: tx.txid, error: String(err && err.message) });
    }
  }
  const jobs = packed.take();
  const nTx = typeof block.nTx === 'number' ? block.nTx : block.tx.length;
  return {
    block: { hash: block.hash, height: block.height, previousblockhash: block.previousblockhash, nTx, hits: [], spends, skipped },
    jobs,
    offsets,
  };
}

parentPort.on('message', (message) => {
  if (message.type === 'stop') process.exit(0);
  if (message.type === 'label') {
    receiver.addLabel(message.m);
    return;
  }
  let answer;
  let transfer = [];
  if (message.type === 'scan') {
    const { hits, refused } = receiver.scanPacked(message.bytes);
    answer = { hits, skipped: refused.map(({ txid, error }) => ({ txid, error: String(error.message) })) };
  }
  else {
    try {
      const body = message.bytes;
      const packed = workerData.nativeParse ? bip352.packBlockAnswer(body, message.rpcId) : undefined;
      if (packed !== undefined) {
        const { hash, height, previousblockhash, nTx, spends, jobs, offsets } = packed;
        answer = { block: { hash, height, previousblockhash, nTx, hits: [], spends, skipped: [] }, jobs, offsets };
      } else answer = parseBlock(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'), message.rpcId);
    } catch (err) {
      answer = garbage('getblock: the answer is not a block (' + String(err && err.message) + ')');
    }
    if (answer.jobs !== undefined) transfer = [answer.jobs.buffer];
  }
  parentPort.postMessage(answer, transfer);
});
`;

/** What a `parse` job sends back: the block without its hits, and the packed transactions to scan. */
interface ParsedBlock {
  block: ScannedBlock;
  jobs: Uint8Array;
  /** Where each packed transaction starts in `jobs`. */
  offsets: number[];
}

/**
 * How long close() waits for a worker to end by itself (after the job it runs) before terminating it.
 * Workers are asked to exit, not terminated at once: terminating a worker while it still loads its
 * modules (`@repo/bip352` requires ES modules) aborts the whole process on Node 20 (V8's fatal
 * error "IsGraphAsync must be used on an instantiated module"), which a stop right after the
 * start used to do. A message waits until the worker's code has loaded.
 */
const STOP_GRACE_MS = 5_000;

/** Ends a worker: asked to exit once loaded and done with its job; terminated past STOP_GRACE_MS. */
function stopWorker(worker: Worker): Promise<void> {
  if (worker.threadId < 0) return Promise.resolve(); // already ended
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      worker.terminate().then(
        () => resolve(),
        () => resolve(),
      );
    }, STOP_GRACE_MS);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.postMessage({ type: 'stop' });
  });
}

/** Below this many transactions to scan, a block is not shared among workers. */
const SHARE_FROM = 64;

/** A worker's answer to a job. */
interface Answer extends Partial<ParsedBlock> {
  failure?: WorkerFailure;
  /** A `scan` job's findings. */
  hits?: ScannedBlock['hits'];
  skipped?: ScannedBlock['skipped'];
}

/** A job waiting for a worker, or running on one. */
interface Job {
  /** The block's place in the order blocks were given: older blocks' jobs go first. */
  seq: number;
  /** 0: parse, 1: a share of the scan. */
  stage: number;
  message: Record<string, unknown>;
  bytes: Uint8Array;
  resolve: (answer: Answer) => void;
  reject: (err: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  /** The job it runs (one at a time, so the next one can be chosen when it is free). */
  job: Job | undefined;
}

/**
 * A pool of worker threads, each with its own BIP-352 receiver, that parses and scans blocks off
 * the thread that fetches the next ones: a block is parsed by one worker, then its transactions
 * are scanned in one share per worker. A worker runs one job at a time; a free worker takes the
 * job of the oldest block first (its parse before its shares), so blocks complete about in order
 * and the last block of a catch-up is scanned by every worker at once. Label additions go to every
 * worker before any later job (messages keep their order). A worker that dies fails its job (the
 * scanner retries the block) and is replaced for the next one.
 */
export function createScanPool(options: ScanPoolOptions): ScanPool {
  const size = Math.max(1, Math.floor(options.workers));
  const labels = [...options.labels];
  const workers: (PoolWorker | undefined)[] = new Array<PoolWorker | undefined>(size).fill(undefined);
  const queue: Job[] = [];
  let nextSeq = 0;
  let closed = false;
  // Workers busy at once while only blocks with more to come are waiting (scanBlock's `more`).
  const steady = Math.max(1, size - 1);
  // Blocks given without `more` whose scan has not ended: while there are any, every worker runs.
  let lastBlocks = 0;
  const bip352 = require.resolve('@repo/bip352/scan');

  function spawn(slot: number): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // Plain JavaScript: not the parent's preloads (a `-r` TypeScript hook would cost each worker a compiler).
      execArgv: [],
      workerData: {
        bip352,
        scanPriv: options.scanPriv,
        spendPub: options.spendPub,
        labels,
        backend: options.backend,
        nativeParse: options.nativeParse ?? true,
      },
    });
    const entry: PoolWorker = { worker, job: undefined };
    const fail = (err: Error) => {
      if (workers[slot] === entry) workers[slot] = undefined;
      const job = entry.job;
      entry.job = undefined;
      job?.reject(err);
      if (!closed) dispatch();
    };
    worker.on('message', (answer: Answer) => {
      const job = entry.job;
      entry.job = undefined;
      if (answer.failure !== undefined) {
        const { kind, message, rpcCode } = answer.failure;
        job?.reject(new ChainRpcError(kind, message, rpcCode === undefined ? {} : { rpcCode }));
      } else job?.resolve(answer);
      // after the block's next jobs (queued as the answer is handled), so they can go first
      queueMicrotask(dispatch);
    });
    worker.on('error', (err) => {
      options.logger.error({ err: err.message, slot }, 'scan worker failed');
      fail(err);
    });
    worker.on('exit', (code) => fail(new Error(`scan worker exited (code ${code})`)));
    worker.unref();
    workers[slot] = entry;
    return entry;
  }

  /**
   * Gives free workers the first jobs waiting (oldest block, parse before scan): up to every
   * worker while a last block is in the pool, up to `steady` while the node still serves blocks.
   */
  function dispatch(): void {
    let busy = 0;
    for (const entry of workers) if (entry?.job !== undefined) busy++;
    const limit = lastBlocks > 0 ? size : steady;
    for (let slot = 0; slot < size && queue.length > 0 && busy < limit; slot++) {
      const entry = workers[slot] ?? spawn(slot);
      if (entry.job !== undefined) continue;
      let best = 0;
      for (let i = 1; i < queue.length; i++) {
        const a = queue[i]!;
        const b = queue[best]!;
        if (a.seq < b.seq || (a.seq === b.seq && a.stage < b.stage)) best = i;
      }
      const job = queue.splice(best, 1)[0]!;
      entry.job = job;
      // Moved, not copied, when the bytes own their memory (the chain client's answers do).
      const { bytes } = job;
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
      const moved = own ? bytes : new Uint8Array(bytes);
      entry.worker.postMessage({ ...job.message, bytes: moved }, [moved.buffer as ArrayBuffer]);
      options.onJobStart?.(++busy);
    }
  }

  function run(seq: number, stage: number, message: Record<string, unknown>, bytes: Uint8Array): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      queue.push({ seq, stage, message, bytes, resolve, reject });
      dispatch();
    });
  }

  /** Parses a block on a worker, then scans its transactions in one share per worker. */
  async function scan(rpcId: string, body: Uint8Array): Promise<ScannedBlock> {
    const seq = nextSeq++;
    const { block, jobs, offsets } = (await run(seq, 0, { type: 'parse', rpcId }, body)) as Answer & ParsedBlock;
    // One share of the transactions per worker, cut at transaction boundaries.
    const shares = offsets.length < SHARE_FROM ? 1 : size;
    const cuts: number[] = [];
    for (let k = 0; k < shares; k++) cuts.push(offsets[Math.floor((k * offsets.length) / shares)] ?? jobs.length);
    cuts.push(jobs.length);
    const runs: Promise<Answer>[] = [];
    for (let k = 0; k < shares; k++) {
      // each share in bytes of its own, moved to its worker
      if (cuts[k + 1]! > cuts[k]!) runs.push(run(seq, 1, { type: 'scan' }, shares === 1 ? jobs : jobs.slice(cuts[k], cuts[k + 1])));
    }
    for (const answer of await Promise.all(runs)) {
      block.hits.push(...answer.hits!);
      block.skipped.push(...answer.skipped!);
    }
    return block;
  }

  return {
    size,
    async scanBlock(rpcId, body, more = false) {
      if (!more) lastBlocks++;
      try {
        return await scan(rpcId, body);
      } finally {
        if (!more) lastBlocks--;
      }
    },
    warm() {
      closed = false;
      for (let slot = 0; slot < size; slot++) if (workers[slot] === undefined) spawn(slot);
    },
    addLabel(m) {
      labels.push(m);
      for (const entry of workers) entry?.worker.postMessage({ type: 'label', m });
    },
    async close() {
      closed = true;
      const running = workers.filter((w): w is PoolWorker => w !== undefined);
      workers.fill(undefined);
      for (const job of queue.splice(0)) job.reject(new Error('scan pool closed'));
      await Promise.all(running.map((w) => stopWorker(w.worker)));
    },
  };
}
