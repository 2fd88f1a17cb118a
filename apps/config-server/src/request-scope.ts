import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '@repo/errors';
import { assignRequestId, type TrustProxy } from '@repo/http';
import { UNMATCHED_ROUTE, type ServiceMetrics } from '@repo/metrics';
import type { Logger } from '@repo/service';
import { parseWaitMs } from './file-query';

/** What a request holds until its response ends (`res.locals.scope`). */
export interface Scope {
  /** The `?wait=` asked for, in ms (0: none, or malformed: the route answers 400 for the latter). */
  waitMs: number;
  /** Counted among the requests in progress (`MAX_IN_FLIGHT`). */
  admitted: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The client's address (`req.ip`: the real client behind a trusted proxy), computed once. */
  ip: string | undefined;
}

/** Told when a response ends (sent, or the client went away: `status` 0). */
export type EndHook = (req: Request, res: Response, status: number) => void;

/** Options of {@link createRequestScope}. */
export interface RequestScopeOptions {
  trustProxy: TrustProxy;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Requests in progress before 503 (`MAX_IN_FLIGHT`). */
  maxInFlight: number;
  /** `REQUEST_TIMEOUT_MS`: a request not answered by then is 408, its `?wait=` added. */
  requestTimeoutMs: number;
  /** The longest `?wait=` accepted (s). */
  maxWaitSeconds: number;
  /** Run when a response ends, after the request line and the metrics (the audit line, the fetch count). */
  onEnd: EndHook[];
}

/** The guards of {@link createRequestScope}, for the app's chain. */
export interface RequestScope {
  /** First: the request id, and the one hook that runs when the response ends. */
  begin: RequestHandler;
  /** After the rate limit: the in-flight cap and the deadline. */
  admit: RequestHandler;
  /** Requests in progress now. */
  readonly inFlight: number;
}

/**
 * What every request passes, with one `close` listener per request instead of one pair per guard
 * (the response's `close` comes after `finish`, or alone when the client goes away): the request
 * id (docs/README.md, "Request ids"), the request line (method, path without the query string,
 * status, ms, client address, request id), the request metrics by route pattern, the hooks
 * (audit line, fetch count), the in-flight cap (503 `SERVICE_UNAVAILABLE`, `Retry-After: 1`)
 * and the deadline (408 `REQUEST_TIMEOUT`, docs/config-server.md, "Limits"). A `?wait=` request is
 * parked, not worked on: it holds no in-flight slot (`MAX_WAITING` bounds those) and its deadline
 * runs from the end of its wait.
 */
export function createRequestScope(options: RequestScopeOptions): RequestScope {
  const { logger, metrics, onEnd, maxInFlight, requestTimeoutMs, maxWaitSeconds, trustProxy } = options;
  let inFlight = 0;

  function begin(req: Request, res: Response, next: () => void): void {
    const start = process.hrtime.bigint();
    const id = assignRequestId(req, res, trustProxy);
    const raw = (req.query as Record<string, unknown>).wait;
    const scope: Scope = {
      waitMs: raw === undefined ? 0 : (parseWaitMs(raw, maxWaitSeconds) ?? 0),
      admitted: false,
      timer: undefined,
      ip: req.ip ?? req.socket.remoteAddress,
    };
    res.locals.scope = scope;
    // Emitted once, after `finish` or alone.
    res.on('close', () => {
      if (scope.timer !== undefined) clearTimeout(scope.timer);
      if (scope.admitted) inFlight--;
      const status = res.headersSent ? res.statusCode : 0;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const line = {
        method: req.method,
        path: req.path,
        status,
        ms: Math.round(ms * 100) / 100,
        ip: scope.ip,
        request_id: id,
        aborted: !res.writableFinished,
      };
      if (status >= 500 || status === 0) logger.warn(line, 'request');
      else logger.info(line, 'request');
      metrics.observeRequest(req.method, routeOf(req, res), status, ms / 1000);
      for (const hook of onEnd) hook(req, res, status);
    });
    next();
  }

  function admit(_req: Request, res: Response, next: (err?: unknown) => void): void {
    const scope = res.locals.scope as Scope;
    if (scope.waitMs === 0) {
      if (inFlight >= maxInFlight) {
        next(new AppError('SERVICE_UNAVAILABLE', { details: 'overloaded', headers: { 'Retry-After': '1' } }));
        return;
      }
      inFlight++;
      scope.admitted = true;
    }
    scope.timer = setTimeout(() => {
      if (res.headersSent) return;
      res.setHeader('Connection', 'close');
      next(new AppError('REQUEST_TIMEOUT'));
    }, requestTimeoutMs + scope.waitMs);
    scope.timer.unref();
    next();
  }

  return {
    begin,
    admit,
    get inFlight() {
      return inFlight;
    },
  };
}

/** The route pattern express matched, else the one a handler put in `res.locals.route`, else `unmatched`. */
function routeOf(req: Request, res: Response): string {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string') return typeof res.locals.route === 'string' ? res.locals.route : UNMATCHED_ROUTE;
  return `${req.baseUrl}${path}` || '/';
}
