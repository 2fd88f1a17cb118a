import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBodySlots, REQUEST_ID_HEADER, type BodySlots, type RateLimiter, type TrustProxy } from '@repo/http';
import type { CallState } from '@repo/json-rpc';
import type { Logger } from '@repo/service';
import type { Authenticator } from '../auth';
import type { ResultCache } from '../cache';
import type { Coalescer } from '../coalesce';
import type { NodeClient } from '../node-client';

/** What the JSON-RPC handler needs (built by src/app.ts from the configuration). */
export interface JsonRpcHandlerDeps {
  logger: Logger;
  auth: Authenticator;
  node: NodeClient;
  /** The client of long polls (LONG_POLL_METHODS): own connections, own timer. */
  longPollNode: NodeClient;
  /** Largest `timeout` a long poll may ask (ms). */
  longPollMaxMs: number;
  cache: ResultCache;
  /** Merges identical read-only calls in flight; undefined: every call goes to the node (RPC_COALESCE=false). */
  coalescer: Coalescer | undefined;
  limiter: RateLimiter;
  allowedMethods: Set<string>;
  userMethods: Map<string, Set<string>>;
  maxBodyBytes: number;
  /** Authenticated bodies read at once; past it 503 with Retry-After (docs/rpc-proxy.md, "Limits"). */
  maxConcurrentBodies: number;
  /** Calls of one client address at the node at once (in flight or waiting); past it 503 (docs/rpc-proxy.md, "Limits"). */
  maxPendingPerAddress: number;
  authFailureDelayMs: number;
  cacheMinConfirmations: number;
  /** Whose `X-Forwarded-For` names the client, for the rate limit and the log (docs/README.md, "Trusted proxies"). */
  trustProxy?: TrustProxy;
  /** Records each request once answered (status 0 when the client left first); `seconds` from its arrival. */
  record?: (req: IncomingMessage, status: number, seconds: number) => void;
}

/**
 * The handler's state, one object passed to every stage (guards → body → plan → forward): its
 * dependencies, the body slots, and the calls each client address has at the node.
 */
export interface RpcContext extends JsonRpcHandlerDeps {
  slots: BodySlots;
  /** Calls at the node (forwarded, not yet answered) by client address. */
  pending: Map<string, number>;
}

/** The context of a handler with `deps`. */
export function createRpcContext(deps: JsonRpcHandlerDeps): RpcContext {
  return { ...deps, slots: createBodySlots(deps.maxConcurrentBodies), pending: new Map() };
}

/** One request on its way through the stages. */
export interface RpcExchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request id (docs/README.md, "Request ids"). */
  id: string;
  /** The client's address (docs/README.md, "Trusted proxies"): rate limit, fairness, log. */
  ip: string;
  /** The request URI as it came (the node gets it as it is). */
  path: string;
}

/** What a request is answered: status, body, the rpc method for the log line, and extra headers. */
export interface Outcome {
  status: number;
  text: string | Buffer;
  rpc: string;
  headers?: readonly string[];
}

/** What a request came to, for its log line: status, rpc method, user. */
export interface Handled {
  status: number;
  rpc: string;
  user?: string;
}

/** The outcome of one call of a request: a local answer or a forward to the node. */
export type Planned =
  | { kind: 'local'; text: string; code?: number; notification: boolean; state: CallState; cached?: undefined }
  /** A cache hit: the exact bytes of the result, wrapped in the call's envelope when answered. */
  | { kind: 'local'; text?: undefined; code?: undefined; notification: boolean; state: CallState; cached: Buffer }
  | {
      kind: 'forward';
      element: unknown;
      notification: boolean;
      state: CallState;
      method: string;
      params: unknown[] | Record<string, unknown>;
      cacheKey?: string;
      confirmKey?: string;
    };

/** A call that goes to the node. */
export type Forward = Extract<Planned, { kind: 'forward' }>;

export const JSON_HEADERS: readonly string[] = ['Content-Type', 'application/json'];
/** What bitcoind's HTTP server writes on its own refusals (404, 405). */
export const HTML_HEADERS: readonly string[] = ['Content-Type', 'text/html; charset=ISO-8859-1'];

/**
 * Answers once, headers and body in one write; `headers` is a flat name/value list, given to
 * `writeHead` with the request id (docs/README.md, "Request ids"). A 204 has neither body nor
 * Content-Length nor Content-Type.
 */
export function send(x: RpcExchange, status: number, body: string | Buffer, headers: readonly string[] = JSON_HEADERS): void {
  const { res } = x;
  if (res.destroyed || res.headersSent) return;
  const empty = status === 204;
  const length = empty ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const list = empty ? [REQUEST_ID_HEADER, x.id] : [...headers, REQUEST_ID_HEADER, x.id, 'Content-Length', String(length)];
  res.writeHead(status, list).end(empty ? undefined : body);
}

/** A value as text for a cache key or a log field: a string as it is, anything else as JSON (never `[object Object]`). */
export function keyPart(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}
