import type { Worker } from 'node:worker_threads';
import { startBip352Worker } from './bip352-worker';
import { packTweakJobs, tweakJobBuffers, type PackedTweakJobs, type ScanInput } from '@repo/bip352';
import type { ComputeTweaks } from './block-record';

/**
 * A block's tweaks computed on a worker thread (docs/silent-payments.md, "The tweak index (light
 * wallets)"): the one variable-base multiplication a transaction costs the index runs beside the
 * scanner's main thread, which meanwhile scans the next block for the service's own keys. Calls
 * are answered in order; the worker is started on the first and keeps no process alive while idle.
 */
export interface TweakWorker {
  readonly compute: ComputeTweaks;
  /** Ends the worker; calls not answered reject. */
  close(): Promise<void>;
}

// The worker: `computePackedTweaks` of @repo/bip352 (built) with the backend asked, per message;
// the answer is one buffer of 33 bytes a transaction (zeros: no tweak), moved back, not copied.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { computePackedTweaks, loadSecp256k1Backend } = require(workerData.bip352);
const backend = loadSecp256k1Backend(workerData.backend);
parentPort.on('message', (jobs) => {
  try {
    const tweaks = computePackedTweaks(jobs, backend);
    const packed = new Uint8Array(33 * tweaks.length);
    tweaks.forEach((tweak, i) => tweak !== null && packed.set(tweak, 33 * i));
    parentPort.postMessage({ packed }, [packed.buffer]);
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
`;

/** The tweaks of a packed answer: each a view of its 33 bytes, null where they are zeros. */
function unpackTweaks(packed: Uint8Array): Array<Uint8Array | null> {
  const tweaks: Array<Uint8Array | null> = [];
  for (let at = 0; at < packed.length; at += 33) tweaks.push(packed[at] === 0 ? null : packed.subarray(at, at + 33));
  return tweaks;
}

interface Call {
  resolve: (tweaks: Array<Uint8Array | null>) => void;
  reject: (error: Error) => void;
}

/** The worker of `backend` (a `@repo/bip352` backend name; default its own, native). */
export function createTweakWorker(backend?: string): TweakWorker {
  let worker: Worker | undefined;
  const waiting: Call[] = [];
  let closed = false;

  const failAll = (reason: string): void => {
    worker = undefined;
    for (const call of waiting.splice(0)) call.reject(new Error(`tweak worker: ${reason}`));
  };
  const start = (): Worker => {
    const w = startBip352Worker(WORKER_SOURCE, backend);
    w.on('message', (answer: { packed?: Uint8Array; error?: string }) => {
      const call = waiting.shift();
      if (waiting.length === 0) w.unref();
      if (answer.packed !== undefined) call?.resolve(unpackTweaks(answer.packed));
      else call?.reject(new Error(`tweak worker: ${answer.error ?? 'no answer'}`));
    });
    w.once('error', (error) => failAll(error.message));
    w.once('exit', (code) => {
      if (worker === w) failAll(`exited with code ${code}`);
    });
    return w;
  };

  return {
    compute(inputs: ScanInput[][]) {
      if (closed) return Promise.reject(new Error('tweak worker: closed'));
      if (inputs.length === 0) return Promise.resolve([]);
      // The inputs' keys read here (the thread that parsed them), packed and moved: no input is cloned.
      let jobs: PackedTweakJobs;
      try {
        jobs = packTweakJobs(inputs);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      worker ??= start();
      const w = worker;
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        w.ref(); // a call in flight keeps the process
        w.postMessage(jobs, tweakJobBuffers(jobs));
      });
    },
    async close() {
      closed = true;
      const w = worker;
      failAll('closed');
      await w?.terminate();
    },
  };
}
