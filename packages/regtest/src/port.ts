import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Binds `port` (0: one the OS picks) on 127.0.0.1 and releases it: the port, or undefined when it is taken. */
function probePort(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      server.close(() => done(address.port));
    });
  });
}

/** The first port of the OS's ephemeral range (Linux: ip_local_port_range; elsewhere 32768, Linux's default). */
export function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Lowest port {@link freePort} draws from. */
export const FREE_PORT_FROM = 15_000;

/**
 * A TCP port free on 127.0.0.1 now, for a server started later (bitcoind, a service process, a
 * fake relay). It is drawn below the OS's ephemeral range: a port the OS picked (listen(0)) could
 * be handed out again before the server binds it, as the source port of a connection another
 * test process opens (the suites run side by side), and the server would fail with EADDRINUSE.
 * Neither outgoing connections nor listen(0) take ports below the range. Falls back to a port
 * the OS picks when none of 50 draws is free.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 50 && low > FREE_PORT_FROM + 1; attempt++) {
    const port = await probePort(FREE_PORT_FROM + Math.floor(Math.random() * (low - FREE_PORT_FROM)));
    if (port !== undefined) return port;
  }
  const port = await probePort(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}
