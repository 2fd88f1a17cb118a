import type { Server } from 'node:net';
import { limitConnectionsPerAddress, type ConnectionCounter, type ServerLimits } from './connection-limit';
import { answerProtocolErrors, type ProtocolErrorOptions } from './protocol-errors';

/**
 * The protection every listener of the services gets (docs/README.md, "Limits and refusals"): the
 * per-address cap below the global one with a reserve for new addresses, the header and request
 * deadlines ({@link limitConnectionsPerAddress}), and protocol errors answered with the service's
 * error record ({@link answerProtocolErrors}); refusals of both are logged to `logger`, at most
 * once a second. Returns the live connection counts.
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
  return connections;
}
