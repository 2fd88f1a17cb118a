import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { requestIdOf } from './request-id';

/**
 * Logs one line per request when its response finishes (or the client goes away): method,
 * path (no query string, which may carry secrets), status, duration in ms, client address (`req.ip`:
 * the real client behind a trusted proxy), request id (docs/README.md, "Request ids").
 */
export function requestLogger(logger: Logger): RequestHandler {
  return function requestLogger(req, res, next) {
    const start = process.hrtime.bigint();
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const line = {
        method: req.method,
        path: req.path,
        status: res.headersSent ? res.statusCode : 0,
        ms: Math.round(ms * 100) / 100,
        ip: req.ip ?? req.socket.remoteAddress,
        request_id: requestIdOf(req),
        aborted: !res.writableFinished,
      };
      if (line.status >= 500 || line.status === 0) logger.warn(line, 'request');
      else logger.info(line, 'request');
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}
