import type { Logger } from '@repo/service';
import type { StorageBackend } from './backends/backend';

/** Options of {@link createSweeper}. */
export interface SweeperOptions {
  backend: StorageBackend;
  /** Clock in ms since the epoch. */
  now: () => number;
  /** Ms between background sweeps. */
  intervalMs: number;
  /** Rows deleted per batch (one short transaction each). */
  batchSize: number;
  /** Batches per sweep at most, so one sweep never runs for long (default 100). */
  maxBatches?: number;
  logger?: Logger;
}

/** Deletes expired values in the background. */
export interface Sweeper {
  /** Starts the timer (unref'd: it never keeps the process alive). */
  start(): void;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
  /** Sweeps now, batch after batch until a batch comes back short; resolves with the rows deleted. */
  runOnce(): Promise<number>;
}

/**
 * Creates the sweeper of expired values. Expired values are already invisible (the backends
 * compare with `now` on every read); sweeping only reclaims their space, so it works in small
 * batches and yields to the event loop between them to keep requests flowing.
 */
export function createSweeper(options: SweeperOptions): Sweeper {
  const maxBatches = options.maxBatches ?? 100;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  async function sweepAll(): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const deleted = await options.backend.sweep(options.now(), options.batchSize);
      total += deleted;
      if (deleted < options.batchSize) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (total > 0) options.logger?.debug({ deleted: total }, 'expired values swept');
    return total;
  }

  function runOnce(): Promise<number> {
    running ??= sweepAll().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    start() {
      if (timer !== undefined) return;
      timer = setInterval(() => {
        runOnce().catch((err: unknown) => options.logger?.warn({ err }, 'sweep failed'));
      }, options.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
    runOnce,
  };
}
