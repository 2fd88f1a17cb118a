import { Pool, type Dispatcher } from 'undici';

/** What one exchange with the node reports: exactly one of the two, once. */
export interface ExchangeHandler {
  /** The node's whole answer (a final status, 200 and up). */
  onComplete(status: number, body: Buffer): void;
  /**
   * The exchange failed. `code`: the socket's error code (ECONNRESET, ECONNREFUSED, …) or
   * undici's; `answering`: the node's answer had begun (its status line was read); `unsent`: the
   * request went out on a kept-alive connection the node had closed meanwhile, which it gave
   * back closed before a byte of an answer: the request never reached the node.
   */
  onError(code: string, answering: boolean, unsent: boolean): void;
}

/** HTTP/1.1 exchanges with the node over kept-alive connections, one exchange each at a time. */
export interface NodeConnections {
  /**
   * Sends `POST path` with `headers` (name/value pairs) and `body`; returns the exchange's
   * abort: `handler` hears nothing more and the connection is closed.
   */
  request(path: string, headers: readonly string[], body: string | Buffer, handler: ExchangeHandler): () => void;
  /** Closes every connection; exchanges in flight fail. */
  close(): void;
}

/** Options of {@link createNodeConnections}. */
export interface NodeConnectionsOptions {
  url: URL;
  /** Connections at most (the client never has more exchanges in flight). */
  connections: number;
  /** An idle connection is closed after this long (below bitcoind's -rpcservertimeout, 30 s). */
  keepAliveMs: number;
}

/** Error codes of a connection the node closed or reset (undici wraps them in UND_ERR_SOCKET). */
function undiciCode(err: Error): string {
  const { code, cause } = err as Error & { code?: string };
  if (code === 'UND_ERR_SOCKET') return (cause as { code?: string } | undefined)?.code ?? 'ECONNRESET';
  return code ?? err.message;
}

/**
 * The node client's connections: an undici Pool, one request per connection at a time, kept
 * alive; each exchange's answer gathered as the Buffers undici reads (never decoded).
 */
export function createNodeConnections(options: NodeConnectionsOptions): NodeConnections {
  const pool = new Pool(options.url.origin, {
    connections: options.connections,
    pipelining: 1,
    // The client's own timer bounds each call.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: options.keepAliveMs,
    keepAliveMaxTimeout: options.keepAliveMs + 5_000,
  });
  return {
    request(path, headers, body, handler) {
      let status = 0;
      let done = false;
      let abort: ((err?: Error) => void) | undefined;
      const chunks: Buffer[] = [];
      const once = (f: () => void) => {
        if (!done) {
          done = true;
          f();
        }
      };
      const dispatch: Dispatcher.DispatchHandlers = {
        onConnect(a) {
          abort = a;
          if (done) a(new Error('exchange abandoned'));
        },
        onHeaders(statusCode) {
          status = statusCode;
          return true;
        },
        onData(chunk) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          once(() => handler.onComplete(status, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
        },
        onError(err: Error & { code?: string; socket?: { bytesRead?: number } }) {
          const unsent = err.code === 'UND_ERR_SOCKET' && (err.socket?.bytesRead ?? 0) > 0 && status === 0;
          once(() => handler.onError(undiciCode(err), status >= 200, unsent));
        },
      };
      const list: Record<string, string> = {};
      for (let i = 0; i + 1 < headers.length; i += 2) list[(headers[i] as string).toLowerCase()] = headers[i + 1] as string;
      try {
        pool.dispatch({ origin: options.url.origin, path, method: 'POST', headers: list, body }, dispatch);
      } catch (err) {
        once(() => handler.onError(undiciCode(err as Error), false, false));
      }
      return () => {
        done = true;
        abort?.(new Error('exchange abandoned'));
      };
    },
    close() {
      void pool.destroy().catch(() => undefined);
    },
  };
}
