import type { Logger } from 'pino';
import { afterLogsWritten } from './logger';

/** Options of {@link onShutdownSignal}. */
export interface ShutdownOptions {
  logger: Logger;
  /** Stops the service: close servers, flush state. */
  stop: () => Promise<void>;
  /** Exit anyway after this long (ms). */
  forceAfterMs?: number;
}

/**
 * On SIGINT or SIGTERM: logs it, runs `stop` once, exits 0 (1 if `stop` failed) once its log
 * lines are written (at most `LOG_DRAIN_MS`, 2 s, later: a reader that stopped reading does not
 * hold the exit); a second signal or the `forceAfterMs` deadline exits at once. Unhandled errors
 * are logged and stop the process the same way, since its state can no longer be trusted.
 */
export function onShutdownSignal(options: ShutdownOptions): void {
  const { logger } = options;
  let stopping = false;
  const shutdown = (reason: string, code: number) => {
    if (stopping) {
      logger.warn({ reason }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ reason }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long: exiting');
      process.exit(1);
    }, options.forceAfterMs ?? 15_000);
    force.unref();
    options
      .stop()
      .then(() => {
        logger.info('stopped');
        exitAfterLogs(code);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'error while stopping');
        exitAfterLogs(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT', 0));
  process.on('SIGTERM', () => shutdown('SIGTERM', 0));
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection');
    shutdown('unhandledRejection', 1);
  });
}

/**
 * Exits with `code` once the lines of every stdout logger of the process are written, or after
 * `LOG_DRAIN_MS`. Exiting at once would write the last lines synchronously while an earlier
 * asynchronous write may still wait for the thread pool: "stopped" before "shutting down".
 */
export function exitAfterLogs(code: number): void {
  afterLogsWritten(() => process.exit(code));
}
