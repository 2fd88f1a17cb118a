import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { documentHandler } from '@repo/api-contract';
import { AppError, RPC_ERROR_CODES } from '@repo/errors';
import { answerOnSocket, assignRequestId, hasDuplicateHost, REQUEST_ID_HEADER, type TrustProxy } from '@repo/http';
import { errorText, initialState } from '@repo/json-rpc';
import type { ServiceMetrics } from '@repo/metrics';
import type { Logger } from '@repo/service';
import type { ProxyMetrics } from './metrics';
import { OPENRPC } from './openrpc';

/** The handlers the proxy's server routes to. */
export interface Routes {
  logger: Logger;
  trustProxy: TrustProxy;
  /** POST `/` and `/wallet/<name>`, and whatever no other route takes (src/routes/json-rpc.ts). */
  jsonRpc: (req: IncomingMessage, res: ServerResponse) => void;
  /** `/health` and `/ready` (src/routes/health.ts). */
  health: (req: IncomingMessage, res: ServerResponse) => boolean;
  metrics: ServiceMetrics;
  instrumented: ProxyMetrics;
}

/** The body of a protocol-level refusal: the JSON-RPC envelope, -32600 for a malformed request (400, 431), -1 otherwise. */
export function protocolErrorBody(error: AppError): unknown {
  const code = error.status === 431 || error.status === 400 ? RPC_ERROR_CODES.INVALID_REQUEST : RPC_ERROR_CODES.MISC_ERROR;
  return { result: null, error: { code, message: error.message }, id: null };
}

/** 400 with a -32600 envelope, for a request no route may take. */
function badRequest(req: IncomingMessage, res: ServerResponse, message: string): void {
  req.resume();
  const text = `${errorText(RPC_ERROR_CODES.INVALID_REQUEST, message, initialState())}\n`;
  res.setHeader('Connection', 'close');
  res.writeHead(400, [
    'Content-Type',
    'application/json',
    REQUEST_ID_HEADER,
    assignRequestId(req, res),
    'Content-Length',
    String(text.length),
  ]);
  res.end(text);
}

/**
 * The server's request listener: `/metrics` and `/openrpc.json` (GET or HEAD, no authentication,
 * no rate limit: docs/rpc-proxy.md, "API document"), `/health` and `/ready`, and everything else
 * to the JSON-RPC handler, which answers unknown paths 404 as bitcoind does.
 */
export function createRouter(routes: Routes): (req: IncomingMessage, res: ServerResponse) => void {
  const document = documentHandler(OPENRPC);
  return function route(req, res) {
    if (hasDuplicateHost(req)) {
      badRequest(req, res, 'more than one Host header');
      return;
    }
    const url = req.url ?? '/';
    const read = req.method === 'GET' || req.method === 'HEAD';
    const path = url.split('?', 1)[0];
    if (!((read && (url === '/metrics' || path === '/openrpc.json')) || path === '/health' || path === '/ready')) {
      // The JSON-RPC handler puts the request id in its answer's headers and records the request itself.
      routes.jsonRpc(req, res);
      return;
    }
    // Every answer carries the request's id (docs/README.md, "Request ids") and is counted by route.
    assignRequestId(req, res, routes.trustProxy);
    routes.instrumented.track(req, res);
    req.resume();
    if (url === '/metrics' && read) {
      routes.metrics.serve(req, res).catch((err: unknown) => {
        routes.logger.error({ err }, 'metrics failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    } else if (read && path === '/openrpc.json') document(req, res);
    else routes.health(req, res);
  };
}

/** A `CONNECT` (node:http hands it over as a bare socket): answered 405 with the envelope, never a silent close. */
export function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  const error = new AppError('METHOD_NOT_ALLOWED', { message: 'JSONRPC server handles only POST requests' });
  answerOnSocket(socket, error, protocolErrorBody);
}
