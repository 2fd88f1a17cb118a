import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { JSONRPC, JSONRPCClient, type JSONRPCRequest, type JSONRPCResponse } from 'json-rpc-2.0';
import { RpcError } from '@repo/errors';
import { createNodeCredentials, type NodeCredentials } from '@repo/node-auth';
import type { Logger } from '@repo/service';

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
  /** Where an unreadable cookie file is reported (path and errno), once per errno. */
  logger?: Logger;
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

/** The ChainRpcError of a JSON-RPC error the node answered (a batch item's `RpcError`, say). */
export function rpcFailure(error: RpcError, status?: number): ChainRpcError {
  return new ChainRpcError('rpc', error.message, { rpcCode: error.code, cause: error, status });
}

/** One call of a batch. */
export interface RpcCall {
  method: string;
  params: unknown[];
}

/**
 * How {@link ChainRpcClient.call} reads an answer: `read` from the bytes of a 200 answer (`id`:
 * the request's), returning undefined where it gives up; then `parse` from the result JSON.parse
 * gave, after the checks every answer gets. For answers too large to parse cheaply (a block).
 */
export interface AnswerReading<T> {
  read(body: Uint8Array, id: string): T | undefined;
  parse(result: unknown): T;
}

/** A JSON-RPC client for Bitcoin Core (or the rpc-proxy in front of it). */
export interface ChainRpcClient {
  /** Calls `method`, its answer read by `reading` when given; throws a ChainRpcError on any failure. */
  call<T>(method: string, params?: unknown[], reading?: AnswerReading<T>): Promise<T>;
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

/** Per request: the transport failure, kept so the caller sees its kind rather than the library's generic error. */
interface Exchange {
  failure?: ChainRpcError;
}

/** What one HTTP exchange with the node needs. */
interface Transport {
  url: URL;
  agent: HttpAgent;
  timeoutMs: number;
  maxBytes: number;
  credentials: NodeCredentials;
}

/** One HTTP exchange: the status and the body, refused past `maxBytes` (announced or not). */
function postOnce(transport: Transport, body: string): Promise<{ status: number; body: Buffer }> {
  const { url, agent, timeoutMs, maxBytes, credentials } = transport;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
    const auth = credentials.authorization();
    if (auth !== undefined) headers.Authorization = auth;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: 'POST', agent, headers, timeout: timeoutMs }, (res: IncomingMessage) => {
      // Settles the exchange first: once a response has begun, destroying the request reports nothing.
      const refuse = () => {
        reject(new ChainRpcError('garbage', `chain node answer over ${maxBytes} bytes`));
        req.destroy();
      };
      if (Number(res.headers['content-length']) > maxBytes) {
        refuse();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) refuse();
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', (err) => reject(toTransportError(err)));
    });
    req.on('timeout', () => req.destroy(new ChainRpcError('unreachable', `chain node did not answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(toTransportError(err)));
    req.end(body);
  });
}

/** One exchange, retried once when the node refused the credentials and the cookie file changed since. */
async function exchange(transport: Transport, body: string): Promise<{ status: number; body: Buffer }> {
  const answer = await postOnce(transport, body);
  if ((answer.status === 401 || answer.status === 403) && transport.credentials.refreshAfterRefusal()) return postOnce(transport, body);
  return answer;
}

/** One exchange (see {@link exchange}); the parsed answer. */
async function post(transport: Transport, body: string): Promise<unknown> {
  const { status, body: answer } = await exchange(transport, body);
  return interpret(transport.credentials, status, answer.toString('utf8'));
}

/** One call whose answer `reading` reads: its bytes first, else the checked result parsed. */
async function callReading<T>(transport: Transport, request: JSONRPCRequest, reading: AnswerReading<T>): Promise<T> {
  const { status, body } = await exchange(transport, JSON.stringify(request)).catch((err: unknown) => {
    throw toTransportError(err);
  });
  if (status === 200) {
    const read = reading.read(body, request.id as string);
    if (read !== undefined) return read;
  }
  const [response] = answersFor(request, interpret(transport.credentials, status, body.toString('utf8')));
  return reading.parse(resultOf(response!, request.method));
}

/** The parsed answer of an exchange; a ChainRpcError for a refusal, an HTTP failure or garbage. */
function interpret(credentials: NodeCredentials, status: number, text: string): unknown {
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (status === 401 || status === 403) {
    // bitcoind sends an empty body, the rpc-proxy a JSON-RPC -1 envelope: either way, refused credentials.
    const said = (parsed as Envelope | undefined)?.error?.message;
    const refusal = credentials.refusal(status);
    const reason = refusal.kind === 'cookie' ? refusal.message : typeof said === 'string' ? said : 'authentication failed';
    throw new ChainRpcError('http', `chain node answered HTTP ${status}: ${reason}`, { status });
  }
  if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
    if (status === 200) throw new ChainRpcError('garbage', 'chain node answered something that is not JSON-RPC', { status });
    const reason = text.trim().slice(0, 120) || 'no body';
    throw new ChainRpcError('http', `chain node answered HTTP ${status}: ${reason}`, { status });
  }
  return parsed;
}

/** The result of a single call's answer; the RpcError it carries thrown as a ChainRpcError. */
function resultOf(envelope: Envelope, method: string): unknown {
  const result = unwrap(envelope, method);
  if (result instanceof RpcError) throw rpcFailure(result);
  return result;
}

/** The result of an answer, or the RpcError it carries. */
function unwrap(envelope: Envelope, method: string): unknown {
  if (envelope.error !== null && envelope.error !== undefined) {
    const code = typeof envelope.error.code === 'number' ? envelope.error.code : -32603;
    const message = typeof envelope.error.message === 'string' ? envelope.error.message : 'unknown error';
    return new RpcError(code, `${method}: ${message}`);
  }
  if (!('result' in envelope)) return new RpcError(-32603, `${method}: answer without result`);
  return envelope.result;
}

/**
 * The responses to hand the library for `payload`: every id it waits for gets one, so no call
 * waits forever; an answer that does not fit the request is a ChainRpcError instead.
 */
function answersFor(payload: JSONRPCRequest | JSONRPCRequest[], parsed: unknown): JSONRPCResponse[] {
  const requests = Array.isArray(payload) ? payload : [payload];
  if (Array.isArray(payload) !== Array.isArray(parsed)) {
    const single = parsed as Envelope;
    if (!Array.isArray(parsed) && single.error) {
      throw new ChainRpcError('rpc', `batch: ${String(single.error.message)}`, { rpcCode: Number(single.error.code) });
    }
    const what = Array.isArray(payload) ? 'batch: chain node did not answer an array' : 'chain node answered a batch to a single call';
    throw new ChainRpcError('garbage', what);
  }
  if (!Array.isArray(parsed)) {
    // An error with id null: refused before the request was read (the rpc-proxy's rate limit or
    // body limit, JSON-RPC's "id unknown"). Its message is the reason, not a missing answer.
    const single = parsed as Envelope;
    const request = requests[0]!;
    if (single.id !== request.id && single.error !== null && single.error !== undefined) {
      throw rpcFailure(unwrap(single, request.method) as RpcError);
    }
  }
  const byId = new Map<string, Envelope>();
  for (const item of (Array.isArray(parsed) ? parsed : [parsed]) as Envelope[]) {
    if (item !== null && typeof item === 'object' && typeof item.id === 'string') byId.set(item.id, item);
  }
  return requests.map((request) => {
    const id = request.id as string;
    const envelope = byId.get(id);
    if (envelope === undefined) {
      return { jsonrpc: JSONRPC, id, error: { code: -32603, message: `${request.method}: missing from the answer` } };
    }
    return { ...envelope, jsonrpc: JSONRPC, id } as JSONRPCResponse;
  });
}

/**
 * Creates the client: JSON-RPC 2.0 envelopes and id matching by `json-rpc-2.0`'s client (Bitcoin
 * Core 29 answers a 2.0 request in 2.0 form, and so does the rpc-proxy: docs/rpc-proxy.md,
 * "Envelope"), HTTP here. Authentication: HTTP basic with user/password, or with the cookie
 * file's content, re-read when it changes and after a 401 since bitcoind writes a new cookie at
 * each start (`@repo/node-auth`, shared with the rpc-proxy).
 */
export function createChainRpcClient(options: ChainRpcClientOptions): ChainRpcClient {
  const url = new URL(options.url);
  const transport: Transport = {
    url,
    agent:
      url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 4 }) : new HttpAgent({ keepAlive: true, maxSockets: 4 }),
    timeoutMs: options.timeoutMs ?? 30_000,
    maxBytes: options.maxResponseBytes ?? 256 * 1024 * 1024,
    credentials: createNodeCredentials({
      user: options.user,
      password: options.password,
      cookieFile: options.cookieFile,
      cookieSetting: 'CHAIN_RPC_COOKIE_FILE',
      who: 'scanner',
      pathInRefusals: true,
      logger: options.logger,
    }),
  };
  let nextId = 0;
  const client = new JSONRPCClient<Exchange>(async (payload: JSONRPCRequest | JSONRPCRequest[], exchange) => {
    try {
      client.receive(answersFor(payload, await post(transport, JSON.stringify(payload))));
    } catch (err) {
      exchange.failure = err instanceof ChainRpcError ? err : toTransportError(err);
      throw exchange.failure;
    }
  });
  /** Sends through the library; throws the transport's ChainRpcError when the exchange failed. */
  async function send(requests: JSONRPCRequest[]): Promise<JSONRPCResponse[]> {
    const exchange: Exchange = {};
    const responses = await client.requestAdvanced(requests, exchange);
    if (exchange.failure !== undefined) throw exchange.failure;
    return responses;
  }
  const request = (method: string, params: unknown[]): JSONRPCRequest => ({ jsonrpc: JSONRPC, id: `sp-${++nextId}`, method, params });
  return {
    async call<T>(method: string, params: unknown[] = [], reading?: AnswerReading<T>): Promise<T> {
      if (reading !== undefined) return callReading(transport, request(method, params), reading);
      const exchange: Exchange = {};
      const response = await client.requestAdvanced(request(method, params), exchange);
      if (exchange.failure !== undefined) throw exchange.failure;
      return resultOf(response, method) as T;
    },
    async batch(calls) {
      if (calls.length === 0) return [];
      const responses = await send(calls.map((c) => request(c.method, c.params)));
      return responses.map((response, i) => unwrap(response, calls[i]!.method));
    },
    close() {
      transport.agent.destroy();
    },
  };
}

function toTransportError(err: unknown): ChainRpcError {
  if (err instanceof ChainRpcError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  return new ChainRpcError('unreachable', `chain node unreachable${code ? ` (${code})` : ''}`, { cause: err });
}
