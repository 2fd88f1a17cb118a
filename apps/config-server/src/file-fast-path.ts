import { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';

/**
 * Whether express would hand this request to the guards' chain (and its file route) and to
 * nothing before or after it: a `GET` or `HEAD` whose path has two segments or more, the second
 * one not empty. Every other route is one segment (`/health`, `/info`, `/ready`, `/metrics`,
 * `/openapi.json`, which express also matches with one trailing slash), so such a path is a file
 * request, or a refusal of the file route, whichever way it is served.
 */
export function isFileRequestUrl(method: string | undefined, url: string | undefined): boolean {
  if ((method !== 'GET' && method !== 'HEAD') || url === undefined || url.charCodeAt(0) !== 0x2f) return false;
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  const slash = path.indexOf('/', 1);
  return slash !== -1 && slash < path.length - 1;
}

/**
 * The classes the server builds its requests and responses from (the `IncomingMessage` and
 * `ServerResponse` options of `createServer`): Node's, with express's helpers of `app` on their
 * prototype chain, set once here rather than on each request (express's own `app.handle` sets them
 * again on the requests it is given, which changes nothing).
 */
export function expressMessageClasses(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {}
  // app.request and app.response lead to IncomingMessage.prototype and ServerResponse.prototype.
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  return { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse };
}

/** What {@link serveFileRequests} runs. */
export interface FileFastPath {
  /** The app whose settings (`trust proxy`, query parser) and request/response helpers the requests get. */
  app: Express;
  /** The guards and the file route, the same handler express runs for these requests. */
  handler: RequestHandler;
  /** What the app runs when nobody answered (its 404). */
  notFound: RequestHandler;
  /** The app's error handlers, in order (as registered on the app). */
  errorHandlers: ErrorRequestHandler[];
  /**
   * What runs when a request leaves the last handler, on either path (`finalHandler` of
   * `@repo/errors`): an error after the answer is one log line, never express's stack on stderr.
   */
  final: (req: Request, res: Response) => (err?: unknown) => void;
}

/**
 * The server's request listener: file requests ({@link isFileRequestUrl}) go straight to the same
 * guards and file route the app's router would run them through, without the router's walk over
 * its layers; every other request goes to express as before. The request and response get
 * express's helpers (`req.ip`, `req.query`, `res.json`, …) as express gives them, and an error
 * reaches the app's own error handlers, so an answer is the same whichever way it is served
 * (docs/config-server.md, "GET /<env>/<file>").
 */
export function serveFileRequests(options: FileFastPath): (req: IncomingMessage, res: ServerResponse) => void {
  const { app, handler, notFound, errorHandlers, final } = options;
  return function configServer(incoming, outgoing) {
    if (!isFileRequestUrl(incoming.method, incoming.url)) {
      app(incoming as Request, outgoing as Response, final(incoming as Request, outgoing as Response));
      return;
    }
    // What express's app.handle and router set up before the first layer (the prototypes only when
    // the server was not built with expressMessageClasses).
    const req = (
      Object.prototype.isPrototypeOf.call(app.request, incoming) ? incoming : Object.setPrototypeOf(incoming, app.request)
    ) as Request;
    const res = (
      Object.prototype.isPrototypeOf.call(app.response, outgoing) ? outgoing : Object.setPrototypeOf(outgoing, app.response)
    ) as Response;
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Record<string, unknown>;
    req.originalUrl = req.url;
    req.baseUrl = '';
    let index = 0;
    const fail = (err: unknown): void => {
      const next = errorHandlers[index++];
      if (next !== undefined) {
        try {
          next(err, req, res, fail);
        } catch (thrown) {
          fail(thrown);
        }
        return;
      }
      // Past every handler: what express's final step would run.
      final(req, res)(err);
    };
    try {
      const result: unknown = handler(req, res, (err?: unknown) => {
        // The file route passes a request on only when it is not a file request, which this path never takes.
        if (err !== undefined) fail(err);
        else notFound(req, res, fail);
      });
      if (result instanceof Promise) result.catch(fail);
    } catch (thrown) {
      fail(thrown);
    }
  };
}
