import type { AddressInfo, Server } from 'node:net';
import { loadDotEnvFile, type Env } from '@repo/config';
import { closeGracefully, listen } from './listen';
import { createLogger, type Logger } from './logger';
import { runMain } from './run-main';
import { onShutdownSignal } from './shutdown';

/**
 * The one shape every app's `createApp(config, deps)` returns: built, never listening, no timers
 * and no file writes until `start()`.
 */
export interface ServiceApp<Servers extends Readonly<Record<string, Server>> = Readonly<Record<string, Server>>> {
  /** The servers to listen, by name (`http`, `https`, `ws`): not listening yet. */
  readonly servers: Servers;
  /** Writes the files the service owns (cookies, keys, certificates), starts timers and background work. */
  start(): Promise<void>;
  /** Stops everything `createApp` built and `start()` started, closes the servers; idempotent. */
  close(): Promise<void>;
}

/** Where a server listens. */
export interface ListenAddress {
  port: number;
  host: string;
}

/** Options of {@link runService}. */
export interface RunServiceOptions<C extends { logLevel: string }, A extends ServiceApp> {
  /** The service name, on every log line. */
  name: string;
  /** An optional `.env` file read before the configuration (variables already set win). */
  envFile: string;
  /** Reads the configuration from the environment (and the command line) once. */
  loadConfig: (env: Env, argv: string[]) => C;
  createApp: (config: C, deps: { logger: Logger }) => A | Promise<A>;
  /** Where each of the app's servers listens. */
  listen: (config: C) => Record<keyof A['servers'], ListenAddress>;
}

/**
 * A service's entry point: reads `.env` and the configuration, builds the app, stops it on
 * SIGINT/SIGTERM, starts it, listens its servers, logs one line per server. A failure to start
 * is one fatal line and exit status 1 (see {@link runMain}).
 */
export function runService<C extends { logLevel: string }, A extends ServiceApp>(options: RunServiceOptions<C, A>): void {
  runMain(options.name, async () => {
    loadDotEnvFile(options.envFile);
    const config = options.loadConfig(process.env, process.argv.slice(2));
    const logger = createLogger({ name: options.name, level: config.logLevel });
    const app = await options.createApp(config, { logger });
    onShutdownSignal({ logger, stop: () => app.close() });
    try {
      await app.start();
      const addresses = options.listen(config);
      const bound: [string, AddressInfo][] = [];
      for (const name of Object.keys(addresses) as (keyof A['servers'] & string)[]) {
        const { port, host } = addresses[name];
        bound.push([name, await listen(app.servers[name] as Server, port, host)]);
      }
      // Logged once every server listens, so any one "listening" line means the service answers.
      for (const [name, address] of bound)
        logger.info({ server: name, host: address.address, port: address.port }, `${options.name} listening`);
    } catch (err) {
      await app.close().catch(() => undefined);
      throw err;
    }
  });
}

/** Closes servers gracefully (see {@link closeGracefully}); for an app's `close()`. */
export async function closeServers(servers: Readonly<Record<string, Server>>, graceMs?: number): Promise<void> {
  await Promise.all(Object.values(servers).map((server) => closeGracefully(server, graceMs)));
}

/** Makes `fn` run once: later calls return the first call's promise (an idempotent `close()`). */
export function once(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= fn());
}
