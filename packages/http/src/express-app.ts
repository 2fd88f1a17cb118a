import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { finalHandler, notFoundHandler, type ErrorLogger } from '@repo/errors';
import type { Logger } from 'pino';
import { refuseDuplicateHost } from './host-header';
import { requestId } from './request-id';
import { requestLogger } from './request-log';
import type { TrustProxy } from './trust-proxy';

/** Options of {@link createExpressApp}. */
export interface ExpressAppOptions {
  /** Which peers' forwarded headers to believe (docs/README.md, "Trusted proxies"). */
  trustProxy: TrustProxy;
  logger: Logger;
  /** Middleware that runs right after the request log, before any route (metrics, for instance). */
  use?: RequestHandler[];
  /** express's automatic weak ETag on answers; default true (express's default). */
  etag?: boolean;
}

/**
 * The express application every service starts from: no `X-Powered-By`, `req.ip` the client
 * behind a trusted proxy, a request id on every request (docs/README.md, "Request ids"), one log
 * line per request, a request with two `Host` fields refused with 400, then `use`, then `OPTIONS`
 * refused as an unknown endpoint (404 with the service's error record): express's routers would
 * answer it themselves with 200 `text/plain` and the path's `Allow`, and none of the services
 * serves CORS or OPTIONS.
 */
export function createExpressApp(options: ExpressAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  if (options.etag === false) app.set('etag', false);
  app.set('trust proxy', options.trustProxy);
  app.use(requestId(options.trustProxy));
  app.use(requestLogger(options.logger));
  app.use(refuseDuplicateHost());
  for (const handler of options.use ?? []) app.use(handler);
  const noSuchEndpoint = notFoundHandler();
  app.use(function refuseOptions(req, res, next) {
    if (req.method === 'OPTIONS') noSuchEndpoint(req, res, next);
    else next();
  });
  return app;
}

/**
 * The server's request listener for an express app: the app with {@link finalHandler} as its
 * last `next`, so an error that comes after the answer (a handler still at work when
 * `requestTimeout` answered 408) is one log line, never express's stack trace on stderr.
 */
export function serveExpress(app: Express, logger?: ErrorLogger): (req: IncomingMessage, res: ServerResponse) => void {
  const final = finalHandler({ logger });
  return (req, res) => {
    app(req as Request, res as Response, final(req as Request, res as Response));
  };
}
