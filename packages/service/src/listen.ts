import type { ServerResponse } from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';

/** The open connections of each server that {@link listen} started (HTTPS: the TLS sockets). */
const connections = new WeakMap<Server, Set<Socket>>();

function trackConnections(server: Server): void {
  if (connections.has(server)) return;
  const open = new Set<Socket>();
  connections.set(server, open);
  // One listener per connection, none per request.
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
}

/**
 * Starts listening and resolves with the bound address (port 0 picks a free port). A failure
 * names the address and what to change (`cannot listen on 127.0.0.1:8081: the port is in use by
 * another process`), with Node's error as its `cause` and its `code`.
 */
export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  trackConnections(server);
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(listenError(err, host, port));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** What an operator reads when a service cannot listen: the address, and what to change. */
const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the port is in use by another process',
  EADDRNOTAVAIL: 'no interface of this machine has that address (check HOST)',
  ENOTFOUND: 'the host name does not resolve (check HOST)',
  EAI_AGAIN: 'the host name could not be resolved now (check HOST)',
  EACCES: 'not allowed (a port below 1024 needs privileges)',
};

/** The error of a failed `listen`, naming the address; Node's error is its `cause`, its `code` kept. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): NodeJS.ErrnoException {
  const why = err.code === undefined ? undefined : LISTEN_FAILURES[err.code];
  const error: NodeJS.ErrnoException = new Error(`cannot listen on ${host}:${port}: ${why ?? err.message}`, { cause: err });
  if (err.code !== undefined) error.code = err.code;
  return error;
}

type ClosableServer = Server & { closeIdleConnections?: () => void; closeAllConnections?: () => void };

/** The answer a connection is busy with (Node's own field, as http-terminator reads it), if any. */
function answerOf(socket: Socket): ServerResponse | null | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
}

/**
 * Stops accepting connections, lets requests in progress finish, closes idle keep-alive
 * connections at once, and destroys what is left after `graceMs`.
 *
 * Keep-alive connections busy when it begins are ended too, so a client that keeps sending
 * cannot hold the shutdown open until `graceMs` cuts every connection, requests in progress
 * included: an answer not yet started says `Connection: close` (its connection ends after it),
 * a connection whose answer had started is closed once that answer is sent, and a request that
 * arrives on a connection not yet closed is answered with `Connection: close`. Servers started
 * by {@link listen} know their busy connections; for others, idle ones are closed every 100 ms.
 * A connection idle when the close begins is closed at once (Node's `server.close` does the
 * same): a request the client sends on it at that very moment is reset, which RFC 9112 (section
 * 9.3.1) leaves to the client to retry.
 */
export function closeGracefully(server: ClosableServer, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const closeIdle = () => server.closeIdleConnections?.();
    const endKeepAlive = (_req: unknown, res: ServerResponse) => {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    };
    // First, before the app's handler, which may answer at once.
    server.prependListener('request', endKeepAlive);
    const open = connections.get(server);
    let sweep: NodeJS.Timeout | undefined;
    if (open !== undefined) {
      for (const socket of open) {
        const res = answerOf(socket);
        if (res === null || res === undefined) continue; // idle: closed below
        if (!res.headersSent) res.setHeader('Connection', 'close');
        else if (!res.writableFinished) res.once('finish', () => setImmediate(closeIdle));
      }
    } else {
      sweep = setInterval(closeIdle, 100);
      sweep.unref();
    }
    const timer = setTimeout(() => server.closeAllConnections?.(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      if (sweep !== undefined) clearInterval(sweep);
      server.off('request', endKeepAlive);
      resolve();
    });
    closeIdle();
  });
}
