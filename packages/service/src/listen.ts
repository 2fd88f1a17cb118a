import type { AddressInfo, Server } from 'node:net';

/** Starts listening and resolves with the bound address (port 0 picks a free port). */
export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops accepting connections, lets requests in progress finish, closes idle keep-alive
 * connections at once, and destroys what is left after `graceMs`.
 */
export function closeGracefully(
  server: Server & { closeIdleConnections?: () => void; closeAllConnections?: () => void },
  graceMs = 10_000,
): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const timer = setTimeout(() => server.closeAllConnections?.(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections?.();
  });
}
