import { RPC_ERROR_CODES } from '@repo/errors';
import { errorStatus, errorText, initialState, jsonArrayElements, splitJsonArray, successReply, successText } from '@repo/json-rpc';
import { countKeys, type BodyScan } from '../body-scan';
import { canonicalJson, echoableId } from '../coalesce';
import { NodeError, parseReply, type NodeReply } from '../node-client';
import { COALESCE_METHODS, LONG_POLL_METHODS, UNBATCHED_METHODS } from '../policy';
import type { ParsedBody } from './body';
import { JSON_HEADERS, keyPart, type Forward, type Outcome, type Planned, type RpcContext, type RpcExchange } from './context';
import { plan } from './plan';

/** The brackets and separator of a batch sent to the node, around its elements' own bytes. */
const BATCH_OPEN = Buffer.from('[');
const BATCH_COMMA = Buffer.from(',');
const BATCH_CLOSE = Buffer.from(']');
/** What a client waits before it tries again when the proxy's queue toward the node is full. */
const RETRY_AFTER_S = '1';

/**
 * A node failure in the call's envelope: -32603, status as Core gives that error (500 for 1.0,
 * 200 for 2.0; a notification 204). A full queue is HTTP 503 with `Retry-After`, as Core answers
 * when its own work queue is full, whatever the envelope: the call was not run.
 */
function nodeFailure(err: NodeError, item: Forward, rpc: string): Outcome {
  const text = `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, err.message, item.state)}\n`;
  if (err.kind === 'queue') return { status: 503, text, rpc, headers: [...JSON_HEADERS, 'Retry-After', RETRY_AFTER_S] };
  if (item.notification) return { status: 204, text: '', rpc };
  return { status: errorStatus(RPC_ERROR_CODES.INTERNAL_ERROR, item.state), text, rpc };
}

/**
 * Holds one of the calls `ip` may have at the node (in flight or waiting): false when it has
 * `maxPendingPerAddress` already, so one address cannot fill the queue others wait in.
 */
function takePending(ctx: RpcContext, ip: string, calls: number): boolean {
  const mine = ctx.pending.get(ip) ?? 0;
  if (mine + calls > ctx.maxPendingPerAddress) return false;
  ctx.pending.set(ip, mine + calls);
  return true;
}

function releasePending(ctx: RpcContext, ip: string, calls: number): void {
  const left = (ctx.pending.get(ip) ?? calls) - calls;
  if (left <= 0) ctx.pending.delete(ip);
  else ctx.pending.set(ip, left);
}

/** The refusal of a call past the address's share of the queue (503, as a full queue). */
function addressQueueFull(ctx: RpcContext): NodeError {
  return new NodeError('queue', `proxy queue full: ${ctx.maxPendingPerAddress} calls of this address are waiting for the node`);
}

/** Fills the cache from a node reply to a single call (only hex-string results). */
function remember(ctx: RpcContext, item: Forward, reply: unknown, path: string): void {
  if (reply === null || typeof reply !== 'object') return;
  const result = (reply as { result?: unknown }).result;
  if (typeof result !== 'string' || !/^[0-9a-f]*$/.test(result)) return;
  if (item.cacheKey) {
    ctx.cache.set(item.cacheKey, Buffer.from(JSON.stringify(result)));
    return;
  }
  if (!item.confirmKey) return;
  // Confirmed deep enough, the raw hex of a txid no longer changes (a mempool version could).
  const confirmKey = item.confirmKey;
  const txid = confirmKey.split(':')[1];
  const body = JSON.stringify({ jsonrpc: '1.0', id: 'proxy-cache', method: 'getrawtransaction', params: [txid, 1] });
  ctx.node
    .call(path, body)
    .then((r) => {
      const conf = (parseReply(r) as { result?: { confirmations?: unknown; hex?: unknown } } | null)?.result;
      if (conf && typeof conf.confirmations === 'number' && conf.confirmations >= ctx.cacheMinConfirmations && conf.hex === result) {
        ctx.cache.set(confirmKey, Buffer.from(JSON.stringify(result)));
      }
    })
    .catch(() => undefined);
}

/**
 * The coalescing key of a single call (docs/rpc-proxy.md, "Coalescing"): path, `jsonrpc` member,
 * method and the canonical JSON of its parameters; undefined when the call must not be merged
 * (not a read, a wallet path, a notification, an id Core might echo otherwise; bodies Core might
 * read otherwise than JSON.parse are sorted out by the caller: src/body-scan.ts).
 */
function coalesceKey(path: string, value: object, item: Forward): string | undefined {
  if (path !== '/' || item.notification || !COALESCE_METHODS.has(item.method) || !echoableId(item.state)) return undefined;
  const version = (value as { jsonrpc?: unknown }).jsonrpc;
  return `${version === undefined || version === null ? '-' : keyPart(version)} ${item.method} ${canonicalJson(item.params)}`;
}

/** The node call of a single call: long polls on their own client, gathered calls batched (docs/rpc-proxy.md, "Batching toward the node"). */
function nodeCall(ctx: RpcContext, path: string, raw: Buffer, item: Forward): Promise<NodeReply> {
  if (LONG_POLL_METHODS.has(item.method)) return ctx.longPollNode.call(path, raw);
  if (item.notification || UNBATCHED_METHODS.has(item.method)) return ctx.node.call(path, raw);
  return ctx.node.callBatched(path, raw, item.state.version !== '2.0');
}

/** Sends the call's bytes to the node (as the leader of flight `key` when there is one); the node's answer passes through unchanged. */
async function forward(
  ctx: RpcContext,
  x: RpcExchange,
  raw: Buffer,
  item: Forward,
  rpc: string,
  key: string | undefined,
): Promise<Outcome> {
  const coalescer = key === undefined ? undefined : ctx.coalescer;
  if (!takePending(ctx, x.ip, 1)) return nodeFailure(addressQueueFull(ctx), item, rpc);
  try {
    const reply = nodeCall(ctx, x.path, raw, item);
    // The flight starts once the call is out (a call that throws at once starts none).
    if (coalescer !== undefined) coalescer.lead(key as string, item.state);
    let r: NodeReply;
    try {
      r = await reply;
    } catch (err) {
      coalescer?.abort(key as string, err);
      throw err;
    }
    coalescer?.land(key as string, r);
    if (item.notification) return { status: 204, text: '', rpc };
    if (item.cacheKey || item.confirmKey) remember(ctx, item, parseReply(r), x.path);
    return { status: r.status, text: r.body, rpc };
  } catch (err) {
    if (!(err instanceof NodeError)) throw err;
    return nodeFailure(err, item, rpc);
  } finally {
    releasePending(ctx, x.ip, 1);
  }
}

/** A call answered here: its envelope error, or its cached result in its own envelope. */
function localOutcome(item: Extract<Planned, { kind: 'local' }>, rpc: string): Outcome {
  if (item.notification && item.code !== RPC_ERROR_CODES.INVALID_REQUEST) return { status: 204, text: '', rpc };
  if (item.cached !== undefined) return { status: 200, text: successReply(item.cached, item.state), rpc };
  if (item.code === undefined) return { status: 200, text: `${item.text}\n`, rpc };
  const envelopeError = item.code === RPC_ERROR_CODES.INVALID_REQUEST;
  return { status: errorStatus(item.code, item.state, envelopeError), text: `${item.text}\n`, rpc };
}

/**
 * The last stage for a single call (not a batch): planned, then answered here, or merged into an
 * identical call in flight (docs/rpc-proxy.md, "Coalescing"), or forwarded to the node.
 */
export async function forwardSingle(ctx: RpcContext, x: RpcExchange, body: ParsedBody, allowed: Set<string>): Promise<Outcome> {
  const value = body.value as object;
  const item = plan(ctx, value, initialState(), allowed);
  const rpc = item.kind === 'forward' ? item.method : keyPart((value as { method?: unknown }).method ?? '?');
  if (item.kind === 'local') return localOutcome(item, rpc);
  const repeated = body.scan.keys !== countKeys(value);
  // A key written twice: Core reads the first (`{"method":"stop","method":"getblockcount"}`
  // would run stop), JSON.parse the last, which is what the allow-list and the parameter
  // checks saw. So what was checked is what is sent: the parsed call, re-serialized.
  const bytes = repeated ? Buffer.from(JSON.stringify(value)) : body.raw;
  const key = ctx.coalescer === undefined || !body.scan.plain || repeated ? undefined : coalesceKey(x.path, value, item);
  if (key === undefined) return forward(ctx, x, bytes, item, rpc, undefined);
  const flight = ctx.coalescer?.join(key);
  if (flight === undefined) return forward(ctx, x, bytes, item, rpc, key);
  const outcome = await flight;
  if (outcome.kind === 'result') return { status: 200, text: successReply(outcome.result, item.state), rpc };
  if (outcome.kind === 'error') return nodeFailure(outcome.error, item, rpc);
  // The leader's reply could not be shared: this call goes to the node itself, as without coalescing.
  return forward(ctx, x, bytes, item, rpc, undefined);
}

/**
 * The body of the batch of `forwards` sent to the node: each element's own bytes, cut out of the
 * client's body (as a single call's are forwarded), so the node reads what the client wrote: its
 * ids and numbers as written (`1.50`, `1e2`, `-0`, integers past 2^53), not as JSON.parse and
 * JSON.stringify would turn them. Re-serialized only when a key is written twice in the body (the
 * elements as parsed and checked) or its elements cannot be cut out.
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

/** Sends a client's batch (its forwarded elements) to the node as one request; the elements of its reply, in order. */
async function sendBatch(
  ctx: RpcContext,
  x: RpcExchange,
  body: ParsedBody,
  forwards: { index: number; item: Forward }[],
): Promise<string[]> {
  if (!takePending(ctx, x.ip, forwards.length)) throw addressQueueFull(ctx);
  try {
    const reply = await ctx.node.call(x.path, batchBody(body.raw, body.scan, body.value as unknown[], forwards));
    const expected = forwards.filter((f) => !f.item.notification).length;
    const replies = reply.status === 204 ? [] : (splitJsonArray(reply.body) ?? []);
    if (replies.length !== expected) throw new NodeError('garbage', 'node answered garbage (batch reply does not match the request)');
    return replies;
  } finally {
    releasePending(ctx, x.ip, forwards.length);
  }
}

/**
 * The last stage for a batch: each element planned; the forbidden and malformed answered in
 * place, the rest sent to the node as one batch; the answer in order, as Core gives it.
 */
export async function forwardBatch(ctx: RpcContext, x: RpcExchange, body: ParsedBody, allowed: Set<string>): Promise<Outcome> {
  const batch = body.value as unknown[];
  const rpc = `batch(${batch.length})`;
  if (batch.length === 0) return { status: 200, text: '[]\n', rpc };
  const state = initialState();
  const items = batch.map((element) => plan(ctx, element, state, allowed, true));
  const forwards: { index: number; item: Forward }[] = [];
  items.forEach((item, index) => {
    if (item.kind === 'forward') forwards.push({ index, item });
  });
  let replies: string[] = [];
  let failure: NodeError | undefined;
  if (forwards.length > 0) {
    try {
      replies = await sendBatch(ctx, x, body, forwards);
    } catch (err) {
      if (!(err instanceof NodeError)) throw err;
      if (err.kind === 'queue') return nodeFailure(err, { ...(forwards[0] as { item: Forward }).item, state: initialState() }, rpc);
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
