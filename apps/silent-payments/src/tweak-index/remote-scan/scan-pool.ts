import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '@repo/service';
import { startBip352Worker } from '../bip352-worker';
import type { StoredTx } from '../store';
import { matchesOf, packRows, type PackedRows, type RemoteMatch } from './scan-rows';
import type { WalletKeys } from './wallet-keys';

/**
 * The remote scan's worker threads (docs/silent-payments.md, "Remote scanning (Frigate's
 * methods)"): each job is a run of index rows and one wallet's keys; the worker scans them with
 * `@repo/bip352`'s receiver (`scanTweaks`: with the native backend one call into C, eight rows at
 * a time sharing their inversions) and answers which outputs pay the wallet.
 */
export interface RemoteScanPool {
  readonly workers: number;
  /**
   * Scans `rows` with `keys` on a worker. The workers are shared fairly: jobs are taken from the
   * owners (subscriptions) in turn, the urgent ones (a new block) before any history. Rejects
   * when the worker fails or the pool closes.
   */
  scan(owner: object, keys: WalletKeys, rows: readonly StoredTx[], urgent: boolean): Promise<RemoteMatch[]>;
  /** Drops the owner's jobs not yet started (they resolve with no match): its keys leave the queue. */
  forget(owner: object): void;
  /** Ends the workers; jobs not done reject. */
  close(): Promise<void>;
}

/** The default of REMOTE_SCAN_WORKERS: one worker a core. */
export function defaultRemoteScanWorkers(): number {
  return availableParallelism();
}

interface Job {
  owner: object;
  keys: WalletKeys;
  rows: readonly StoredTx[];
  packed: PackedRows;
  resolve: (matches: RemoteMatch[]) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

// The worker: a receiver per job (b_scan, B_spend, the labels; the change label always), the rows
// rebuilt as views of the moved buffers, the answer as (row, position) pairs. Its copy of b_scan is
// zeroed once the receiver holds its own, and the receiver is dropped with the job.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createReceiver, loadSecp256k1Backend } = require(workerData.bip352);
const backend = loadSecp256k1Backend(workerData.backend);
parentPort.on('message', ({ scanPriv, spendPub, labels, tweaks, xs, counts }) => {
  try {
    const receiver = createReceiver({ scanPriv, spendPub, labels, backend });
    scanPriv.fill(0);
    const rows = [];
    for (let i = 0, at = 0; i < counts.length; i++) {
      const outputs = [];
      for (let j = 0; j < counts[i]; j++, at += 32) outputs.push(xs.subarray(at, at + 32));
      rows.push({ tweak: tweaks.subarray(33 * i, 33 * i + 33), outputs });
    }
    const hits = [];
    receiver.scanTweaks(rows).forEach((found, i) => {
      if (found instanceof Error) return; // t_k not a valid scalar: the row pays no one (negligible probability)
      for (const f of found) hits.push(i, f.index);
    });
    const answer = Uint32Array.from(hits);
    parentPort.postMessage({ hits: answer }, [answer.buffer]);
  } catch (error) {
    scanPriv.fill(0);
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
`;

/** Options of {@link createRemoteScanPool}. */
export interface RemoteScanPoolOptions {
  /** Worker threads (REMOTE_SCAN_WORKERS), at least 1. */
  workers: number;
  /** The `@repo/bip352` backend of the workers; default its own (native). */
  backend?: string;
  /** Where a failed job is logged (its reason only: never a key). */
  logger?: Logger;
}

/** Jobs waiting, by owner; taking one moves its owner to the end of the turn. */
class TurnQueue {
  private readonly waiting = new Map<object, Job[]>();

  push(job: Job): void {
    const jobs = this.waiting.get(job.owner);
    if (jobs === undefined) this.waiting.set(job.owner, [job]);
    else jobs.push(job);
  }

  take(): Job | undefined {
    for (const [owner, jobs] of this.waiting) {
      const job = jobs.shift();
      this.waiting.delete(owner);
      if (jobs.length > 0) this.waiting.set(owner, jobs);
      if (job !== undefined) return job;
    }
    return undefined;
  }

  drop(owner: object): Job[] {
    const jobs = this.waiting.get(owner) ?? [];
    this.waiting.delete(owner);
    return jobs;
  }

  dropAll(): Job[] {
    const jobs = [...this.waiting.values()].flat();
    this.waiting.clear();
    return jobs;
  }
}

/** The pool, its workers started on the first job (none while no wallet scans). */
export function createRemoteScanPool(options: RemoteScanPoolOptions): RemoteScanPool {
  const size = Math.max(1, Math.floor(options.workers));
  const slots: Slot[] = [];
  const urgent = new TurnQueue();
  const history = new TurnQueue();
  let closed = false;

  const finish = (slot: Slot, answer: { hits?: Uint32Array; error?: string }): void => {
    const { job } = slot;
    slot.job = undefined;
    slot.worker.unref(); // an idle worker keeps no process alive
    if (job !== undefined) {
      if (answer.hits !== undefined) job.resolve(matchesOf(job.rows, answer.hits));
      else {
        const reason = answer.error ?? 'no answer';
        options.logger?.error({ reason, rows: job.rows.length }, 'remote scan job failed: the subscription waits for the next block');
        job.reject(new Error(`remote scan failed: ${reason}`));
      }
    }
    dispatch();
  };

  const spawn = (): Slot => {
    const worker = startBip352Worker(WORKER_SOURCE, options.backend);
    const slot: Slot = { worker, job: undefined };
    worker.on('message', (answer: { hits?: Uint32Array; error?: string }) => finish(slot, answer));
    const gone = (reason: string): void => {
      slots.splice(slots.indexOf(slot), 1);
      if (slot.job !== undefined) finish(slot, { error: reason });
    };
    worker.once('error', (error) => gone(error.message));
    worker.once('exit', (code) => {
      if (slots.includes(slot)) gone(`worker exited with code ${code}`);
    });
    worker.unref();
    slots.push(slot);
    return slot;
  };

  const dispatch = (): void => {
    while (!closed) {
      const slot = slots.find((s) => s.job === undefined) ?? (slots.length < size ? spawn() : undefined);
      if (slot === undefined) return;
      const job = urgent.take() ?? history.take();
      if (job === undefined) return;
      slot.job = job;
      slot.worker.ref(); // a job in flight does
      const { tweaks, xs, counts } = job.packed;
      const { scanPriv, spendPub, labels } = job.keys;
      slot.worker.postMessage({ scanPriv, spendPub, labels, tweaks, xs, counts }, [tweaks.buffer, xs.buffer, counts.buffer]);
    }
  };

  return {
    workers: size,
    scan(owner, keys, rows, isUrgent) {
      if (closed) return Promise.reject(new Error('the remote scan pool is closed'));
      if (rows.length === 0) return Promise.resolve([]);
      return new Promise<RemoteMatch[]>((resolve, reject) => {
        (isUrgent ? urgent : history).push({ owner, keys, rows, packed: packRows(rows), resolve, reject });
        dispatch();
      });
    },
    forget(owner) {
      for (const job of [...urgent.drop(owner), ...history.drop(owner)]) job.resolve([]);
    },
    async close() {
      closed = true;
      for (const job of [...urgent.dropAll(), ...history.dropAll()]) job.reject(new Error('the remote scan pool is closed'));
      await Promise.all(
        slots.splice(0).map(async (slot) => {
          slot.job?.reject(new Error('the remote scan pool is closed'));
          await slot.worker.terminate();
        }),
      );
    },
  };
}
