import { ConfigError } from '@repo/config';
import { afterLogsWritten, createLogger } from './logger';
import { exitAfterLogs } from './shutdown';

/**
 * Runs a service's entry point. A failure to start (a `ConfigError` naming the variable, a port
 * already in use, a key file that cannot be read) is one fatal JSON log line and exit status 1,
 * never a stack trace; errors after start are the shutdown handler's (`onShutdownSignal`).
 */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    // the lines the service logged before it failed go out first, then the fatal one
    afterLogsWritten(() => {
      const logger = createLogger({ name });
      if (err instanceof ConfigError) logger.fatal(`configuration error: ${err.message}`);
      else logger.fatal({ reason: err instanceof Error ? err.message : String(err) }, 'failed to start');
      exitAfterLogs(1);
    });
  });
}
