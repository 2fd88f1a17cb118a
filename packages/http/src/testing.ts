/**
 * Test support for services built on this package (imported as `@repo/http/testing`, never by
 * production code).
 */
import { connect, type Socket } from 'node:net';

/**
 * Opens a TCP connection to `port` on the loopback and waits `settleMs`: resolves with the socket
 * and whether the server closed it at once (a connection cap refusing it).
 */
export function openConnection(port: number, settleMs = 100): Promise<{ socket: Socket; closedAtOnce: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('connect', () => {
      const timer = setTimeout(() => resolve({ socket, closedAtOnce: false }), settleMs);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve({ socket, closedAtOnce: true });
      });
    });
  });
}
