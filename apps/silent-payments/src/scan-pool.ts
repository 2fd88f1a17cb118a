import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FoundOutput, RpcVin } from '@repo/bip352';
import type { Logger } from '@repo/service';

/** One transaction as a worker needs it: its inputs (with prevouts) and its taproot outputs. */
export interface ScanJobTx {
  /** Position of the transaction in its block. */
  i: number;
  vin: RpcVin[];
  /** Output index and script hex of each P2TR output. */
  outs: Array<[number, string]>;
}

/** What a worker found in one transaction of the job. */
export interface ScanJobResult {
  /** The transaction's position in its block. */
  i: number;
  found: FoundOutput[];
  /** The library refused the transaction (it cannot pay us): why. */
  error?: string;
}

/** Elliptic-curve work of the scan on worker threads (docs/silent-payments.md, "Scanner"). */
export interface ScanPool {
  readonly size: number;
  /** Scans the transactions on a worker; resolves with the matches, in the order given. */
  scan(txs: ScanJobTx[]): Promise<ScanJobResult[]>;
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
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bip352 = require(workerData.bip352);
const receiver = bip352.createReceiver({
  scanPriv: workerData.scanPriv,
  spendPub: workerData.spendPub,
  labels: workerData.labels,
  backend: bip352.loadSecp256k1Backend(workerData.backend),
});
parentPort.on('message', (message) => {
  if (message.type === 'label') {
    receiver.addLabel(message.m);
    return;
  }
  const results = [];
  for (const tx of message.txs) {
    try {
      const outputs = tx.outs.map(([index, hex]) => ({ index, script: Buffer.from(hex, 'hex') }));
      const found = receiver.scanTransaction(bip352.scanInputsFromRpc(tx.vin), outputs);
      if (found.length > 0) results.push({ i: tx.i, found });
    } catch (err) {
      results.push({ i: tx.i, found: [], error: String(err && err.message) });
    }
  }
  parentPort.postMessage({ id: message.id, results });
});
`;

interface Pending {
  resolve: (results: ScanJobResult[]) => void;
  reject: (err: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * A pool of worker threads, each with its own BIP-352 receiver, that scans blocks' transactions
 * off the thread that fetches and parses the next blocks. Jobs go to the worker with the fewest
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
    worker.on('message', (message: { id: number; results: ScanJobResult[] }) => {
      const p = entry.pending.get(message.id);
      entry.pending.delete(message.id);
      p?.resolve(message.results);
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
    scan(txs) {
      if (txs.length === 0) return Promise.resolve([]);
      const entry = pick();
      const id = nextId++;
      return new Promise<ScanJobResult[]>((resolve, reject) => {
        entry.pending.set(id, { resolve, reject });
        entry.worker.postMessage({ type: 'scan', id, txs });
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
