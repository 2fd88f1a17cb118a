import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { RpcError } from '@repo/errors';

/** Options of {@link createChainRpcClient}. */
export interface ChainRpcClientOptions {
  /** `http://host:port` of the rpc-proxy or of bitcoind. */
  url: string;
  user?: string | undefined;
  password?: string | undefined;
  /** Bitcoin Core cookie file (`__cookie__:<hex>`), used when no user/password is given. */
  cookieFile?: string | undefined;
  /** Per request (ms). */
  timeoutMs?: number;
  /** Largest response accepted (bytes); a full block at verbosity 3 is tens of MB. */
  maxResponseBytes?: number;
}

/**
 * Why a call failed: `unreachable` (refused, reset, timed out), `http` (a status without a
 * JSON-RPC answer, e.g. 401 or 503 "Work queue depth exceeded"), `garbage` (not JSON-RPC),
 * `rpc` (the node answered a JSON-RPC error; `rpcCode` holds its code).
 */
export type ChainRpcFailure = 'unreachable' | 'http' | 'garbage' | 'rpc';

/** A failed call to the chain node. Messages never contain credentials. */
export class ChainRpcError extends Error {
  override readonly name = 'ChainRpcError';
  readonly kind: ChainRpcFailure;
  readonly status: number | undefined;
  readonly rpcCode: number | undefined;

  constructor(kind: ChainRpcFailure, message: string, options: { status?: number; rpcCode?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.kind = kind;
    this.status = options.status;
    this.rpcCode = options.rpcCode;
  }
}

/** One call of a batch. */
export interface RpcCall {
  method: string;
  params: unknown[];
}

/** A JSON-RPC client for Bitcoin Core (or the rpc-proxy in front of it). */
export interface ChainRpcClient {
  /** Calls `method`; throws a ChainRpcError on any failure. */
  call<T>(method: string, params?: unknown[]): Promise<T>;
  /** Sends one batch; each item is the result or the RpcError of that call. Throws when the batch itself fails. */
  batch(calls: RpcCall[]): Promise<Array<unknown>>;
  /** Releases pooled connections. */
  close(): void;
}

interface Envelope {
  result?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
  id?: unknown;
}

/**
 * Creates the client. Authentication: HTTP basic with user/password, or with the cookie file's
 * content (re-read after a 401, since bitcoind writes a new cookie at each start). JSON-RPC 1.0
 * envelopes as bitcoin-cli sends them (docs/rpc-proxy.md, "Envelope").
 */
export function createChainRpcClient(options: ChainRpcClientOptions): ChainRpcClient {
  const url = new URL(options.url);
  const isHttps = url.protocol === 'https:';
  const agent = isHttps ? new HttpsAgent({ keepAlive: true, maxSockets: 4 }) : new HttpAgent({ keepAlive: true, maxSockets: 4 });
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxBytes = options.maxResponseBytes ?? 256 * 1024 * 1024;
  let nextId = 0;
  let cookie: string | undefined;

  function authorization(): string | undefined {
    if (options.user !== undefined && options.password !== undefined) {
      return `Basic ${Buffer.from(`${options.user}:${options.password}`).toString('base64')}`;
    }
    if (options.cookieFile !== undefined) {
      if (cookie === undefined) {
        try {
          cookie = readFileSync(options.cookieFile, 'utf8').trim();
        } catch {
          cookie = undefined;
        }
      }
      if (cookie !== undefined) return `Basic ${Buffer.from(cookie).toString('base64')}`;
    }
    return undefined;
  }

  function post(body: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
      const auth = authorization();
      if (auth !== undefined) headers.Authorization = auth;
      const send = isHttps ? httpsRequest : httpRequest;
      const req = send(url, { method: 'POST', agent, headers, timeout: timeoutMs }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new ChainRpcError('garbage', `chain node answer over ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => reject(toTransportError(err)));
      });
      req.on('timeout', () => req.destroy(new ChainRpcError('unreachable', `chain node did not answer within ${timeoutMs} ms`)));
      req.on('error', (err) => reject(toTransportError(err)));
      req.end(body);
    });
  }

  async function exchange(body: string): Promise<unknown> {
    let { status, text } = await post(body);
    if (status === 401 && options.user === undefined && options.cookieFile !== undefined) {
      cookie = undefined; // the node restarted and wrote a new cookie
      ({ status, text } = await post(body));
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (status === 401 || status === 403) {
      // bitcoind sends an empty body, the rpc-proxy a JSON-RPC -1 envelope: either way, refused credentials.
      const said = (parsed as Envelope | undefined)?.error?.message;
      const reason = typeof said === 'string' ? said : 'authentication failed';
      throw new ChainRpcError('http', `chain node answered HTTP ${status}: ${reason}`, { status });
    }
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
      if (status === 200) throw new ChainRpcError('garbage', 'chain node answered something that is not JSON-RPC', { status });
      const reason = status === 401 ? 'authentication failed' : text.trim().slice(0, 120) || 'no body';
      throw new ChainRpcError('http', `chain node answered HTTP ${status}: ${reason}`, { status });
    }
    return parsed;
  }

  function unwrap(envelope: Envelope, method: string): unknown {
    if (envelope.error !== null && envelope.error !== undefined) {
      const code = typeof envelope.error.code === 'number' ? envelope.error.code : -32603;
      const message = typeof envelope.error.message === 'string' ? envelope.error.message : 'unknown error';
      return new RpcError(code, `${method}: ${message}`);
    }
    if (!('result' in envelope)) return new RpcError(-32603, `${method}: answer without result`);
    return envelope.result;
  }

  return {
    async call<T>(method: string, params: unknown[] = []): Promise<T> {
      const id = `sp-${++nextId}`;
      const parsed = await exchange(JSON.stringify({ jsonrpc: '1.0', id, method, params }));
      if (Array.isArray(parsed)) throw new ChainRpcError('garbage', `${method}: chain node answered a batch to a single call`);
      const result = unwrap(parsed as Envelope, method);
      if (result instanceof RpcError) throw new ChainRpcError('rpc', result.message, { rpcCode: result.code, cause: result });
      return result as T;
    },
    async batch(calls) {
      if (calls.length === 0) return [];
      const base = ++nextId;
      const body = calls.map((c, i) => ({ jsonrpc: '1.0', id: `sp-${base}-${i}`, method: c.method, params: c.params }));
      const parsed = await exchange(JSON.stringify(body));
      if (!Array.isArray(parsed)) {
        const single = parsed as Envelope;
        if (single.error) throw new ChainRpcError('rpc', `batch: ${String(single.error.message)}`, { rpcCode: Number(single.error.code) });
        throw new ChainRpcError('garbage', 'batch: chain node did not answer an array');
      }
      const byId = new Map<string, Envelope>();
      for (const item of parsed as Envelope[]) {
        if (item !== null && typeof item === 'object' && typeof item.id === 'string') byId.set(item.id, item);
      }
      return calls.map((c, i) => {
        const envelope = byId.get(`sp-${base}-${i}`);
        return envelope === undefined ? new RpcError(-32603, `${c.method}: missing from the batch answer`) : unwrap(envelope, c.method);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

function toTransportError(err: unknown): ChainRpcError {
  if (err instanceof ChainRpcError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  return new ChainRpcError('unreachable', `chain node unreachable${code ? ` (${code})` : ''}`, { cause: err });
}
