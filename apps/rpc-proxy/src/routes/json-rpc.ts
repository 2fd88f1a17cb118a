import type { IncomingMessage, ServerResponse } from 'node:http';
import { FastRequest, FastResponse } from '../fast-front';
import { RPC_ERROR_CODES } from '@repo/errors';
import type { Logger } from '@repo/service';
import {
  clientAddress,
  createBodySlots,
  rateLimitHeaders,
  REQUEST_ID_HEADER,
  newRequestId,
  TRUST_NONE,
  type RateLimiter,
  type TrustProxy,
} from '@repo/http';
import type { Authenticator } from '../auth';
import { requestLineWriter } from '../request-log';
import type { ResultCache } from '../cache';
import { countKeys, scanBody, type BodyScan } from '../body-scan';
import { canonicalJson, echoableId, type Coalescer } from '../coalesce';
import {
  coreAcceptsStrings,
  type EnvelopeError,
  errorStatus,
  errorText,
  initialState,
  isNotification,
  jsonArrayElements,
  parseCall,
  splitJsonArray,
  successReply,
  successText,
  type CallState,
} from '@repo/json-rpc';
import { NodeError, parseReply, type NodeClient } from '../node-client';
import { checkParams, COALESCE_METHODS, LONG_POLL_METHODS, methodsFor, ParamError, UNBATCHED_METHODS } from '../policy';

/** What the JSON-RPC handler needs. */
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
  authFailureDelayMs: number;
  cacheMinConfirmations: number;
  /** Whose `X-Forwarded-For` names the client, for the rate limit and the log (docs/README.md, "Trusted proxies"). */
  trustProxy?: TrustProxy;
  /**
   * Records each request once answered (or given up: status 0 when the client left first), in
   * place of a `close` listener per request; `seconds` from its arrival.
   */
  record?: (req: RpcRequest, status: number, seconds: number) => void;
}

/** A request as node:http gives it, or as the front end read it whole (src/fast-front.ts). */
export type RpcRequest = IncomingMessage | FastRequest;
/** The answer to a {@link RpcRequest}. */
export type RpcResponse = ServerResponse | FastResponse;

const JSON_TYPE = 'application/json';
/** Header lists as flat arrays (`writeHead` takes them as they are: no object to copy per answer). */
const JSON_HEADERS: readonly string[] = ['Content-Type', JSON_TYPE];
const HTML_HEADERS: readonly string[] = ['Content-Type', 'text/html; charset=ISO-8859-1'];
/** Unauthenticated clients get their body read only this far (for the id of the 401 envelope). */
const UNAUTHENTICATED_BODY_LIMIT = 64 * 1024;
/**
 * Deepest nesting of arrays and objects accepted: Bitcoin Core's own bound (MAX_JSON_DEPTH in
 * src/univalue/lib/univalue_read.cpp), checked on the bytes before JSON.parse, so a body of
 * millions of `[` costs a scan and is answered as Core would (a parse error).
 */
const MAX_JSON_DEPTH = 512;
/** The brackets and separator of a batch sent to the node, around its elements' own bytes. */
const BATCH_OPEN = Buffer.from('[');
const BATCH_COMMA = Buffer.from(',');
const BATCH_CLOSE = Buffer.from(']');

/** The outcome of one call of a request: a local answer or a forward to the node. */
type Planned =
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

type Forward = Extract<Planned, { kind: 'forward' }>;

/** What a request is answered: status, body, and the rpc method for the log line. */
interface Outcome {
  status: number;
  text: string | Buffer;
  rpc: string;
}

/**
 * The cache key of an immutable answer: getblock at verbosity 0 and getblockheader verbose
 * false (a block hash fixes the bytes), getrawtransaction without verbose (fixed by the
 * block hash when given; otherwise cached only once confirmed deep enough: `confirmKey`).
 */
function cacheKeys(method: string, p: unknown[]): { cacheKey?: string; confirmKey?: string } {
  const off = (v: unknown) => v === 0 || v === false;
  const unset = (v: unknown) => v === undefined || v === null;
  if (method === 'getblock' && off(p[1])) return { cacheKey: `getblock:${String(p[0]).toLowerCase()}` };
  if (method === 'getblockheader' && p[1] === false) return { cacheKey: `getblockheader:${String(p[0]).toLowerCase()}` };
  if (method === 'getrawtransaction' && (unset(p[1]) || off(p[1]))) {
    const txid = String(p[0]).toLowerCase();
    if (!unset(p[2])) return { cacheKey: `getrawtransaction:${txid}:${keyPart(p[2]).toLowerCase()}` };
    return { confirmKey: `getrawtransaction:${txid}` };
  }
  return {};
}

/**
 * The JSON-RPC endpoint: POST `/` and `/wallet/<name>`, answered as bitcoind answers (see
 * packages/chain-double/fixtures/bitcoind), with the proxy's own rules in front: rate limit, authentication,
 * allow-lists (-32601), parameter checks (-32602), node failures (-32603), cache.
 */
export function createJsonRpcHandler(deps: JsonRpcHandlerDeps): (req: RpcRequest, res: RpcResponse) => void {
  const { logger, auth, node, cache, limiter, coalescer } = deps;
  /** Authenticated bodies being read now, in all and per address (a quarter of them each). */
  const slots = createBodySlots(deps.maxConcurrentBodies);
  /** The request line, built by hand into the logger's destination (same bytes as pino's: src/request-log.ts). */
  const writeRequestLine = requestLineWriter(logger);

  /**
   * Answers once (headers and body in one write); `headers` is a flat name/value list, given to
   * `writeHead` whole with the request id (docs/README.md, "Request ids"): no `setHeader` before
   * it, which would send Node's header handling down its slow path for every answer.
   */
  function send(res: RpcResponse, id: string, status: number, body: string | Buffer, headers: readonly string[] = JSON_HEADERS): void {
    // A 204 has neither body nor Content-Length nor Content-Type.
    const empty = status === 204;
    const length = empty ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    const list = empty ? [REQUEST_ID_HEADER, id] : [...headers, REQUEST_ID_HEADER, id, 'Content-Length', String(length)];
    if (res instanceof FastResponse) res.answer(status, list, empty ? '' : body);
    else if (!res.destroyed && !res.headersSent) res.writeHead(status, list).end(empty ? undefined : body);
  }

  /** Ends the connection after the answer (a refused body may still be arriving on it). */
  function closeAfter(res: RpcResponse): void {
    if (res instanceof FastResponse) res.closeAfter();
    else res.setHeader('Connection', 'close');
  }

  /** The body the front end read whole, within `limit`. */
  function wholeBody(req: FastRequest, limit: number): Buffer | 'too-large' {
    return req.body.length > limit ? 'too-large' : req.body;
  }

  function readBody(req: RpcRequest, limit: number): Promise<Buffer | 'too-large'> {
    if (req instanceof FastRequest) return Promise.resolve(wholeBody(req, limit));
    return new Promise((resolve) => {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > limit) {
        req.resume();
        resolve('too-large');
        return;
      }
      // Most bodies arrive in one chunk: keep it as it is, concatenate only when there are more.
      let first: Buffer | undefined;
      let chunks: Buffer[] | undefined;
      let size = 0;
      let done = false;
      req.on('data', (chunk: Buffer) => {
        if (done) return;
        size += chunk.length;
        if (size > limit) {
          done = true;
          resolve('too-large');
          return;
        }
        if (first === undefined) first = chunk;
        else (chunks ??= [first]).push(chunk);
      });
      req.on('end', () => {
        if (!done) resolve(chunks ? Buffer.concat(chunks) : (first ?? Buffer.alloc(0)));
      });
      req.on('error', () => {
        if (!done) resolve(Buffer.alloc(0));
        done = true;
      });
    });
  }

  /** The id of a single request object, for the 401 envelope (null when there is none to find). */
  function idOf(body: Buffer | 'too-large'): CallState {
    const state = initialState();
    if (body === 'too-large') return state;
    try {
      if (scanBody(body, MAX_JSON_DEPTH).depth > MAX_JSON_DEPTH) return state;
      const value = JSON.parse(body.toString('utf8')) as unknown;
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'id' in value) state.id = { value: value.id };
    } catch {
      // not JSON: id null
    }
    return state;
  }

  /** Decides one call: answered here (envelope error, not allowed, bad params, cached) or forwarded. */
  function plan(element: unknown, state: CallState, allowed: Set<string>, inBatch = false): Planned {
    let method: string;
    let params: unknown[] | Record<string, unknown>;
    try {
      ({ method, params } = parseCall(element, state));
    } catch (err) {
      const e = err as EnvelopeError;
      return {
        kind: 'local',
        text: errorText(e.code, e.message, state),
        code: e.code,
        notification: isNotification(state),
        state: { ...state },
      };
    }
    const snapshot = { ...state };
    const notification = isNotification(state);
    if (!allowed.has(method)) {
      return {
        kind: 'local',
        text: errorText(RPC_ERROR_CODES.METHOD_NOT_FOUND, 'Method not found', state),
        code: RPC_ERROR_CODES.METHOD_NOT_FOUND,
        notification,
        state: snapshot,
      };
    }
    let positional: unknown[] | undefined;
    try {
      positional = checkParams(method, params);
      if (LONG_POLL_METHODS.has(method)) {
        // A long poll is bounded here: Core's timeout 0 (or none) would wait for ever.
        if (inBatch) throw new ParamError(`${method} is a long poll: send it alone, not in a batch`);
        const timeout = positional?.[0];
        if (typeof timeout !== 'number' || timeout < 1 || timeout > deps.longPollMaxMs) {
          throw new ParamError(
            `invalid parameter "timeout": ${method} needs a timeout from 1 to ${deps.longPollMaxMs} ms through this proxy`,
          );
        }
      }
    } catch (err) {
      if (!(err instanceof ParamError)) throw err;
      return {
        kind: 'local',
        text: errorText(RPC_ERROR_CODES.INVALID_PARAMS, err.message, state),
        code: RPC_ERROR_CODES.INVALID_PARAMS,
        notification,
        state: snapshot,
      };
    }
    const keys = positional ? cacheKeys(method, positional) : {};
    const cached = keys.cacheKey ? cache.get(keys.cacheKey) : keys.confirmKey ? cache.get(keys.confirmKey) : undefined;
    if (cached !== undefined) return { kind: 'local', cached, notification, state: snapshot };
    return { kind: 'forward', element, notification, state: snapshot, method, params, ...keys };
  }

  /** Fills the cache from a node reply to a single call (only hex-string results). */
  function remember(item: Extract<Planned, { kind: 'forward' }>, reply: unknown, path: string): void {
    if (reply === null || typeof reply !== 'object') return;
    const result = (reply as { result?: unknown }).result;
    if (typeof result !== 'string' || !/^[0-9a-f]*$/.test(result)) return;
    if (item.cacheKey) {
      cache.set(item.cacheKey, Buffer.from(JSON.stringify(result)));
      return;
    }
    if (item.confirmKey) {
      // Confirmed deep enough, the raw hex of a txid no longer changes (a mempool version could).
      const txid = item.confirmKey.split(':')[1];
      const body = JSON.stringify({ jsonrpc: '1.0', id: 'proxy-cache', method: 'getrawtransaction', params: [txid, 1] });
      node
        .call(path, body)
        .then((r) => {
          const conf = (parseReply(r) as { result?: { confirmations?: unknown; hex?: unknown } } | null)?.result;
          if (conf && typeof conf.confirmations === 'number' && conf.confirmations >= deps.cacheMinConfirmations && conf.hex === result) {
            cache.set(item.confirmKey as string, Buffer.from(JSON.stringify(result)));
          }
        })
        .catch(() => undefined);
    }
  }

  /** A single call (not a batch), `scan` its body's ({@link scanBody}): answered here, or forwarded to the node (a promise). */
  function handleSingle(path: string, raw: Buffer, scan: BodyScan, value: object, allowed: Set<string>): Outcome | Promise<Outcome> {
    const state = initialState();
    const item = plan(value, state, allowed);
    const rpc = item.kind === 'forward' ? item.method : keyPart((value as { method?: unknown }).method ?? '?');
    if (item.kind === 'local') {
      if (item.notification && item.code !== -32600) return { status: 204, text: '', rpc };
      if (item.cached !== undefined) return { status: 200, text: successReply(item.cached, item.state), rpc };
      if (item.code === undefined) return { status: 200, text: `${item.text}\n`, rpc };
      const envelopeError = item.code === -32600;
      return { status: errorStatus(item.code, item.state, envelopeError), text: `${item.text}\n`, rpc };
    }
    const repeated = scan.keys !== countKeys(value);
    // A key written twice: Core reads the first (`{"method":"stop","method":"getblockcount"}`
    // would run stop), JSON.parse the last, which is what the allow-list and the parameter
    // checks saw. So what was checked is what is sent: the parsed call, re-serialized.
    const bytes = repeated ? Buffer.from(JSON.stringify(value)) : raw;
    const key = coalescer === undefined || !scan.plain || repeated ? undefined : coalesceKey(path, value, item);
    if (key === undefined) return forward(path, bytes, item, rpc, undefined);
    const flight = (coalescer as Coalescer).join(key);
    if (flight === undefined) return forward(path, bytes, item, rpc, key);
    return flight.then((outcome) => {
      if (outcome.kind === 'result') return { status: 200, text: successReply(outcome.result, item.state), rpc };
      if (outcome.kind === 'error') return nodeFailure(outcome.error, item, rpc);
      // The leader's reply could not be shared: this call goes to the node itself, as without coalescing.
      return forward(path, bytes, item, rpc, undefined);
    });
  }

  /**
   * The coalescing key of a single call (docs/rpc-proxy.md, "Coalescing"): path, `jsonrpc` member, method and the
   * canonical JSON of its parameters; undefined when the call must not be merged (not a read,
   * a wallet path, a notification, an id Core might echo otherwise; bodies Core might read
   * otherwise than JSON.parse are sorted out by the caller: {@link scanBody}).
   */
  function coalesceKey(path: string, value: object, item: Forward): string | undefined {
    if (path !== '/' || item.notification || !COALESCE_METHODS.has(item.method) || !echoableId(item.state)) return undefined;
    const version = (value as { jsonrpc?: unknown }).jsonrpc;
    return `${version === undefined || version === null ? '-' : keyPart(version)} ${item.method} ${canonicalJson(item.params)}`;
  }

  function nodeFailure(err: NodeError, item: Forward, rpc: string): Outcome {
    if (item.notification) return { status: 204, text: '', rpc };
    return {
      status: errorStatus(RPC_ERROR_CODES.INTERNAL_ERROR, item.state),
      text: `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, err.message, item.state)}\n`,
      rpc,
    };
  }

  /** Sends the call's bytes to the node (as the leader of flight `key` when there is one). */
  function forward(path: string, raw: Buffer, item: Forward, rpc: string, key: string | undefined): Promise<Outcome> {
    // The client's own bytes are forwarded (re-serialized only when a key is repeated: see handleSingle).
    // Calls that arrive together go to the node together, one HTTP request for several
    // (docs/rpc-proxy.md, "Batching toward the node"); each still gets Core's own answer.
    const reply = LONG_POLL_METHODS.has(item.method)
      ? deps.longPollNode.call(path, raw)
      : item.notification || UNBATCHED_METHODS.has(item.method)
        ? node.call(path, raw)
        : node.callBatched(path, raw, item.state.version !== '2.0');
    // As the leader of flight `key`, the call ends it with its outcome (docs/rpc-proxy.md,
    // "Coalescing"). The flight starts once the call is out: a call that throws at once starts
    // none (its followers would wait for ever), and its outcome comes in a later turn, after this.
    if (key !== undefined) (coalescer as Coalescer).lead(key, item.state);
    const failed = (err: unknown): Outcome => {
      if (!(err instanceof NodeError)) throw err;
      return nodeFailure(err, item, rpc);
    };
    return reply.then(
      (r): Outcome => {
        if (key !== undefined) (coalescer as Coalescer).land(key, r);
        if (item.notification) return { status: 204, text: '', rpc };
        if (item.cacheKey || item.confirmKey) {
          try {
            remember(item, parseReply(r), path);
          } catch (err) {
            return failed(err);
          }
        }
        // The node's answer passes through unchanged, status and bytes, without being parsed.
        return { status: r.status, text: r.body, rpc };
      },
      (err: unknown) => {
        if (key !== undefined) (coalescer as Coalescer).abort(key, err);
        return failed(err);
      },
    );
  }

  /**
   * The body of the batch of `forwards` sent to the node: each element's own bytes, cut out of the
   * client's body `raw` (as a single call's are forwarded), so the node reads what the client
   * wrote: its ids and numbers as written (`1.50`, `1e2`, `-0`, integers past 2^53, `1e400`), not
   * as JSON.parse and JSON.stringify would turn them (`1.5`, `100`, `0`, rounded, `null`).
   * Re-serialized only when a key is written twice in the body (the elements as parsed and
   * checked, as a single call: see handleSingle) or its elements cannot be cut out.
   */
  function batchBody(raw: Buffer, scan: BodyScan, batch: unknown[], forwards: { index: number; item: Forward }[]): string | Buffer {
    const bounds = scan.keys === countKeys(batch) ? jsonArrayElements(raw) : undefined;
    if (bounds === undefined || bounds.length !== 2 * batch.length) return JSON.stringify(forwards.map((f) => f.item.element));
    const parts: Buffer[] = [];
    for (const { index } of forwards) {
      parts.push(parts.length === 0 ? BATCH_OPEN : BATCH_COMMA, raw.subarray(bounds[2 * index], bounds[2 * index + 1]));
    }
    parts.push(BATCH_CLOSE);
    return Buffer.concat(parts);
  }

  async function handleBatch(path: string, raw: Buffer, scan: BodyScan, batch: unknown[], allowed: Set<string>): Promise<Outcome> {
    const rpc = `batch(${batch.length})`;
    if (batch.length === 0) return { status: 200, text: '[]\n', rpc };
    const state = initialState();
    const items = batch.map((element) => plan(element, state, allowed, true));
    const forwards: { index: number; item: Forward }[] = [];
    items.forEach((item, index) => {
      if (item.kind === 'forward') forwards.push({ index, item });
    });
    let replies: string[] = [];
    let failure: NodeError | undefined;
    if (forwards.length > 0) {
      try {
        const reply = await node.call(path, batchBody(raw, scan, batch, forwards));
        const expected = forwards.filter((f) => !f.item.notification).length;
        if (reply.status === 204) replies = [];
        else replies = splitJsonArray(reply.body) ?? [];
        if (replies.length !== expected) throw new NodeError('garbage', 'node answered garbage (batch reply does not match the request)');
      } catch (err) {
        if (!(err instanceof NodeError)) throw err;
        failure = err;
      }
    }
    const out: string[] = [];
    let next = 0;
    for (const item of items) {
      if (item.notification) continue;
      if (item.kind === 'local') out.push(item.cached !== undefined ? successText(item.cached.toString('utf8'), item.state) : item.text);
      else if (failure) out.push(errorText(RPC_ERROR_CODES.INTERNAL_ERROR, failure.message, item.state));
      else out.push(replies[next++] as string);
    }
    if (out.length === 0) return { status: 204, text: '', rpc };
    return { status: 200, text: `[${out.join(',')}]\n`, rpc };
  }

  /** What a request came to, for its log line: status, rpc method, user. */
  type Handled = { status: number; rpc: string; user?: string };

  /**
   * `ip`: the client's address (docs/README.md, "Trusted proxies"), for the rate limit. Not an
   * `async` function: a call the front end read whole goes from its bytes to the node client
   * without one, and its answer is written from the one continuation of the node's reply.
   */
  function handle(req: RpcRequest, res: RpcResponse, id: string, ip: string): Handled | Promise<Handled> {
    // bitcoind's HTTP server answers unknown paths itself, before authentication. It matches the
    // whole URI, query included: `/` exactly (`/?x` is unknown), `/wallet/` as a prefix, the rest
    // naming the wallet (`/wallet/w?x` is wallet "w?x"); so the URI goes to the node as it came.
    const path = req.url ?? '/';
    if (path !== '/' && !path.startsWith('/wallet/')) {
      req.resume();
      send(res, id, 404, '', HTML_HEADERS);
      return { status: 404, rpc: '-' };
    }
    if (req.method !== 'POST') {
      req.resume();
      send(res, id, 405, 'JSONRPC server handles only POST requests', HTML_HEADERS);
      return { status: 405, rpc: '-' };
    }
    const decision = limiter.take(ip);
    if (!decision.allowed) {
      req.resume();
      const body = `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, `rate limit exceeded: retry after ${decision.retryAfter} s`, initialState())}\n`;
      send(res, id, 429, body, [...JSON_HEADERS, ...Object.entries(rateLimitHeaders(decision)).flat()]);
      return { status: 429, rpc: '-' };
    }
    const who = auth.check(req.headers.authorization);
    if (!who.ok) return refuse(req, res, id, who.reason);
    // Read whole by the front end: no slot to take (they bound the bodies being read).
    if (req instanceof FastRequest) return answerBody(res, id, path, who.user, wholeBody(req, deps.maxBodyBytes));
    const address = req.socket.remoteAddress ?? 'unknown';
    if (!slots.take(address)) {
      req.resume();
      closeAfter(res);
      send(
        res,
        id,
        503,
        `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, 'too many request bodies being read: retry after 1 s', initialState())}\n`,
        [...JSON_HEADERS, 'Retry-After', '1'],
      );
      return { status: 503, rpc: '-', user: who.user };
    }
    return readBody(req, deps.maxBodyBytes)
      .finally(() => slots.release(address))
      .then((body) => answerBody(res, id, path, who.user, body));
  }

  /** The 401 of a request without valid credentials (its body read this far for the id of the envelope). */
  async function refuse(req: RpcRequest, res: RpcResponse, id: string, reason: 'missing' | 'invalid'): Promise<Handled> {
    const body = await readBody(req, UNAUTHENTICATED_BODY_LIMIT);
    // Like bitcoind, wrong credentials are answered late to slow down guessing; none at all, at once.
    if (reason === 'invalid' && deps.authFailureDelayMs > 0) await new Promise((r) => setTimeout(r, deps.authFailureDelayMs));
    const message = reason === 'missing' ? 'authentication required' : 'incorrect credentials';
    send(res, id, 401, `${errorText(RPC_ERROR_CODES.MISC_ERROR, message, idOf(body))}\n`, [
      ...JSON_HEADERS,
      'WWW-Authenticate',
      'Basic realm="jsonrpc"',
    ]);
    return { status: 401, rpc: '-' };
  }

  /** Answers an authenticated request's body: parsed, planned, answered here or forwarded. */
  function answerBody(res: RpcResponse, id: string, path: string, user: string, body: Buffer | 'too-large'): Handled | Promise<Handled> {
    if (body === 'too-large') {
      closeAfter(res);
      send(
        res,
        id,
        413,
        `${errorText(RPC_ERROR_CODES.INVALID_REQUEST, `request body larger than ${deps.maxBodyBytes} bytes`, initialState())}\n`,
      );
      return { status: 413, rpc: '-', user };
    }
    const allowed = methodsFor(user, deps.allowedMethods, deps.userMethods);
    let value: unknown;
    // One pass over the bytes before the parse: the nesting bound, and what JSON.parse hides (src/body-scan.ts).
    const scan = scanBody(body, MAX_JSON_DEPTH);
    try {
      if (scan.depth > MAX_JSON_DEPTH) throw new Error('nested too deep');
      value = JSON.parse(body.toString('utf8'));
      // Invalid UTF-8 or a lone surrogate in any string: Core refuses the whole body (a parse error).
      if (!scan.asciiStrings && !coreAcceptsStrings(body)) throw new Error('a string Core would not read');
    } catch {
      send(res, id, 500, `${errorText(RPC_ERROR_CODES.PARSE_ERROR, 'Parse error', initialState())}\n`);
      return { status: 500, rpc: '-', user };
    }
    const answered = (outcome: Outcome): Handled => {
      send(res, id, outcome.status, outcome.text);
      return { status: outcome.status, rpc: outcome.rpc, user };
    };
    if (Array.isArray(value)) return handleBatch(path, body, scan, value, allowed).then(answered);
    if (value === null || typeof value !== 'object') {
      return answered({
        status: 500,
        text: `${errorText(RPC_ERROR_CODES.PARSE_ERROR, 'Top-level object parse error', initialState())}\n`,
        rpc: '-',
      });
    }
    const outcome = handleSingle(path, body, scan, value, allowed);
    return outcome instanceof Promise ? outcome.then(answered) : answered(outcome);
  }

  return function jsonRpc(req, res) {
    const started = performance.now();
    // The handler is the only one to ask a JSON-RPC request its id (app.ts sends other routes elsewhere).
    const id = newRequestId(req, deps.trustProxy);
    const ip = clientAddress(req, deps.trustProxy ?? TRUST_NONE);
    const fail = (err: unknown): void => {
      logger.error({ err }, 'unexpected error');
      const recorded = res.headersSent;
      send(res, id, 500, `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, 'internal error', initialState())}\n`);
      if (!recorded) deps.record?.(req, res.headersSent ? 500 : 0, (performance.now() - started) / 1000);
    };
    const done = ({ status, rpc, user }: Handled): void => {
      try {
        const ms = performance.now() - started;
        deps.record?.(req, res.headersSent ? status : 0, ms / 1000);
        if (logger.isLevelEnabled('info')) {
          // The path without its query string, which may carry secrets (as @repo/http's requestLogger).
          const url = req.url ?? '/';
          const query = url.indexOf('?');
          const path = query < 0 ? url : url.slice(0, query);
          writeRequestLine({
            method: req.method,
            path,
            status,
            rpc,
            user,
            ip,
            request_id: id,
            ms: Math.round(ms * 100) / 100,
          });
        }
      } catch (err) {
        fail(err);
      }
    };
    let handled: Handled | Promise<Handled>;
    try {
      handled = handle(req, res, id, ip);
    } catch (err) {
      fail(err);
      return;
    }
    if (handled instanceof Promise) handled.then(done, fail);
    else done(handled);
  };
}

/** A value as text for a cache key or a log field: a string as it is, anything else as JSON (never `[object Object]`). */
function keyPart(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}
