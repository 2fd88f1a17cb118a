import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FoundOutput } from '@repo/bip352';
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
   * Rejects with a ChainRpcError when the answer is a JSON-RPC error or not a block.
   */
  scanBlock(rpcId: string, body: Uint8Array): Promise<ScannedBlock>;
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
  /** The `@repo/bip352` backend (SP_SCAN_BACKEND); undefined: its default. */
  backend?: string | undefined;
  logger: Logger;
}

/** The default of SCAN_WORKERS: one core for the thread that fetches and parses, the others scan. */
export function defaultScanWorkers(): number {
  return Math.max(1, availableParallelism() - 1);
}

// The worker: its own receiver (the native scanner's tables are built once per process and
// shared by every thread), labels in the order the main thread sends them, one job at a time.
// A job is a block as the node sent it: parsing it here keeps JSON.parse and the garbage of the
// parsed block off the thread that fetches the next blocks; only what the scanner stores comes
// back (the scanner's own thread does the same in scanner.ts when SCAN_WORKERS=0).
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
function scanBlock(text, rpcId) {
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
  const hits = [];
  const spends = [];
  const skipped = [];
  for (const tx of block.tx) {
    const vin = tx.vin;
    for (const v of vin) if (typeof v.txid === 'string' && typeof v.vout === 'number') spends.push(v.txid + ':' + v.vout, tx.txid);
    // OP_1 OP_PUSHBYTES_32 <32 bytes> (BIP-341): only taproot outputs can be silent payments.
    let outputs;
    for (const out of tx.vout) {
      const hex = out.scriptPubKey.hex;
      if (hex.length === 68 && hex.startsWith('5120')) (outputs ??= []).push({ index: out.n, script: Buffer.from(hex, 'hex'), value: out.value });
    }
    if (outputs === undefined || vin.length === 0 || typeof vin[0].coinbase === 'string') continue;
    if (vin.some((v) => v.prevout === undefined)) {
      return garbage('transaction ' + tx.txid + ' comes without prevouts: the node must support getblock verbosity 3 (Bitcoin Core 25 or later)');
    }
    let found;
    try {
      found = receiver.scanTransaction(bip352.scanInputsFromRpc(vin), outputs);
    } catch (err) {
      skipped.push({ txid: tx.txid, error: String(err && err.message) });
      continue;
    }
    if (found.length > 0) hits.push({ txid: tx.txid, found, values: found.map((f) => outputs.find((o) => o.index === f.index).value) });
  }
  const nTx = typeof block.nTx === 'number' ? block.nTx : block.tx.length;
  return { block: { hash: block.hash, height: block.height, previousblockhash: block.previousblockhash, nTx, hits, spends, skipped } };
}
parentPort.on('message', (message) => {
  if (message.type === 'label') {
    receiver.addLabel(message.m);
    return;
  }
  let answer;
  try {
    const body = message.body;
    answer = scanBlock(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'), message.rpcId);
  } catch (err) {
    answer = garbage('getblock: the answer is not a block (' + String(err && err.message) + ')');
  }
  parentPort.postMessage({ id: message.id, ...answer });
});
`;

interface Pending {
  resolve: (block: ScannedBlock) => void;
  reject: (err: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * A pool of worker threads, each with its own BIP-352 receiver, that parses and scans blocks off
 * the thread that fetches the next ones. Jobs go to the worker with the fewest
 * in flight; label additions go to every worker before any later job (messages keep their order).
 * A worker that dies fails its jobs (the scanner retries the block) and is replaced on the next job.
 */
export function createScanPool(options: ScanPoolOptions): ScanPool {
  const size = Math.max(1, Math.floor(options.workers));
  const labels = [...options.labels];
  const workers: (PoolWorker | undefined)[] = new Array<PoolWorker | undefined>(size).fill(undefined);
  let nextId = 0;
  const bip352 = require.resolve('@repo/bip352');

  function spawn(slot: number): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { bip352, scanPriv: options.scanPriv, spendPub: options.spendPub, labels, backend: options.backend },
    });
    const entry: PoolWorker = { worker, pending: new Map() };
    const fail = (err: Error) => {
      if (workers[slot] === entry) workers[slot] = undefined;
      for (const p of entry.pending.values()) p.reject(err);
      entry.pending.clear();
    };
    worker.on('message', (message: { id: number; block?: ScannedBlock; failure?: WorkerFailure }) => {
      const p = entry.pending.get(message.id);
      entry.pending.delete(message.id);
      if (message.failure !== undefined) {
        const { kind, message: text, rpcCode } = message.failure;
        p?.reject(new ChainRpcError(kind, text, rpcCode === undefined ? {} : { rpcCode }));
      } else p?.resolve(message.block!);
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

  function pick(): PoolWorker {
    let best: PoolWorker | undefined;
    for (let slot = 0; slot < size; slot++) {
      const entry = workers[slot] ?? spawn(slot);
      if (best === undefined || entry.pending.size < best.pending.size) best = entry;
    }
    return best!;
  }

  return {
    size,
    scanBlock(rpcId, body) {
      const entry = pick();
      const id = nextId++;
      // Moved, not copied, when the bytes own their memory (the chain client's answers do).
      const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
      const bytes = own ? body : new Uint8Array(body);
      return new Promise<ScannedBlock>((resolve, reject) => {
        entry.pending.set(id, { resolve, reject });
        entry.worker.postMessage({ type: 'block', id, rpcId, body: bytes }, [bytes.buffer as ArrayBuffer]);
      });
    },
    warm() {
      for (let slot = 0; slot < size; slot++) if (workers[slot] === undefined) spawn(slot);
    },
    addLabel(m) {
      labels.push(m);
      for (const entry of workers) entry?.worker.postMessage({ type: 'label', m });
    },
    async close() {
      const running = workers.filter((w): w is PoolWorker => w !== undefined);
      workers.fill(undefined);
      await Promise.all(running.map((w) => w.worker.terminate()));
    },
  };
}
