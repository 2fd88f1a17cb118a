import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP forwarder between two relays whose link a test can cut and restore. */
export interface TcpForwarder {
  port: number;
  /** Destroys every forwarded connection and refuses new ones (a partition). */
  cut(): void;
  /** Forwards new connections again. */
  restore(): void;
  close(): Promise<void>;
}

/** Forwards connections to 127.0.0.1:`targetPort`, listening on port 0. */
export async function startTcpForwarder(targetPort: number): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  let cut = false;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('forwarder has no port');
  return {
    port: address.port,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close() {
      cut = true;
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
