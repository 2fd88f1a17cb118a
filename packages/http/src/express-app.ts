import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
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
 * line per request, then `use`.
 */
export function createExpressApp(options: ExpressAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  if (options.etag === false) app.set('etag', false);
  app.set('trust proxy', options.trustProxy);
  app.use(requestId(options.trustProxy));
  app.use(requestLogger(options.logger));
  for (const handler of options.use ?? []) app.use(handler);
  return app;
}
