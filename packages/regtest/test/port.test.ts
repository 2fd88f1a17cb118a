import { createServer, connect, type Server } from 'node:net';
import { ephemeralLow, freePort, FREE_PORT_FROM } from '../src/port';

const listenOn = (server: Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('freePort', () => {
  it('draws ports below the ephemeral range, which connections and listen(0) never hand out', async () => {
    const low = ephemeralLow();
    expect(low).toBeGreaterThan(FREE_PORT_FROM + 1);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(FREE_PORT_FROM);
      expect(port).toBeLessThan(low);
    }
    // the ports of 20 outgoing connections and 20 listen(0) servers all lie in the range
    const target = createServer((socket) => socket.destroy());
    await listenOn(target, 0);
    const { port: targetPort } = target.address() as { port: number };
    const sockets = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<number>((resolve, reject) => {
            const s = connect(targetPort, '127.0.0.1', () => {
              resolve(s.localPort as number);
              s.destroy();
            });
            s.once('error', reject);
          }),
      ),
    );
    const servers = Array.from({ length: 20 }, () => createServer());
    await Promise.all(servers.map((s) => listenOn(s, 0)));
    const picked = [...sockets, ...servers.map((s) => (s.address() as { port: number }).port)];
    await Promise.all([...servers, target].map(close));
    for (const port of picked) expect(port).toBeGreaterThanOrEqual(low);
  });

  it('gives a port a server can then bind', async () => {
    const server = createServer();
    await listenOn(server, await freePort());
    await close(server);
  });
});
