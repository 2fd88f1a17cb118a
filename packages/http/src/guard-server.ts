import type { IncomingMessage } from 'node:http';
import type { Server } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError } from '@repo/errors';
import { limitConnectionsPerAddress, type ConnectionCounter, type ServerLimits } from './connection-limit';
import { answerOnSocket, answerProtocolErrors, flatErrorBody, type ProtocolErrorOptions } from './protocol-errors';

/**
 * The protection every listener of the services gets (docs/README.md, "Limits and refusals"): the
 * per-address cap below the global one with a reserve for new addresses, the header and request
 * deadlines ({@link limitConnectionsPerAddress}), protocol errors answered with the service's
 * error record ({@link answerProtocolErrors}), and `CONNECT` answered 405 (Node would close the
 * socket without a word; none of the services is a tunnel). Refusals are logged to `logger`, at
 * most once a second. Returns the live connection counts.
 */
export function guardServer(server: Server, limits: ServerLimits, options: ProtocolErrorOptions = {}): ConnectionCounter {
  const connections = limitConnectionsPerAddress(server, {
    maxPerAddress: limits.maxConnectionsPerIp,
    maxTotal: limits.maxConnections,
    headersTimeoutMs: limits.headersTimeoutMs,
    requestTimeoutMs: limits.requestTimeoutMs,
    logger: options.logger,
  });
  answerProtocolErrors(server, options);
  server.on('connect', function refuseConnect(req: IncomingMessage, socket: Duplex) {
    // A service with a CONNECT answer of its own keeps it.
    if (server.listenerCount('connect') > 1) return;
    const error = new AppError('METHOD_NOT_ALLOWED', { message: 'CONNECT is not served here: this is not a proxy' });
    options.logger?.info({ method: 'CONNECT', status: error.status, ip: req.socket.remoteAddress }, 'request');
    answerOnSocket(socket, error, options.errorBody ?? flatErrorBody, options.headers);
  });
  return connections;
}
