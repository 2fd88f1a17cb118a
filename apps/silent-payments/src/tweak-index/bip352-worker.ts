import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `source` (CommonJS, evaluated) with `workerData.bip352`, the path of the
 * built `@repo/bip352` to `require`, and `workerData.backend`, the backend name to load (undefined:
 * its default). Evaluated rather than a file of its own so that the tests, which run the
 * TypeScript sources, need no TypeScript in the worker: it loads only the built library.
 */
export function startBip352Worker(source: string, backend: string | undefined): Worker {
  return new Worker(source, { eval: true, workerData: { bip352: require.resolve('@repo/bip352'), backend } });
}
