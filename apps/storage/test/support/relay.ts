import { createServer, connect, type Server, type Socket } from 'node:net';

/** A TCP relay in front of a real server (Redis), which a test can cut, restore, or freeze. */
export interface Relay {
  port: number;
  /** Closes every connection and stops listening: the server is unreachable. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Holds every byte in both directions: the server hangs (as a stopped process would). */
  pause(): void;
  /** Lets the held bytes and the later ones through again. */
  resume(): void;
  close(): Promise<void>;
}

/** Starts a relay on a free loopback port to `target`. */
export async function startRelay(target: { host: string; port: number }): Promise<Relay> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let paused = false;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
          if (paused) socket.pause();
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const down = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await open();
  return {
    get port() {
      return port;
    },
    down,
    up: open,
    pause() {
      paused = true;
      for (const socket of sockets) socket.pause();
    },
    resume() {
      paused = false;
      for (const socket of sockets) socket.resume();
    },
    close: down,
  };
}
