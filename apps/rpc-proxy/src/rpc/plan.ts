import { RPC_ERROR_CODES } from '@repo/errors';
import { errorText, isNotification, parseCall, type CallState, type EnvelopeError } from '@repo/json-rpc';
import { checkParams, LONG_POLL_METHODS, ParamError } from '../policy';
import { keyPart, type Planned, type RpcContext } from './context';

/**
 * The cache key of an immutable answer: getblock at verbosity 0 and getblockheader verbose
 * false (a block hash fixes the bytes), getrawtransaction without verbose (fixed by the
 * block hash when given; otherwise cached only once confirmed deep enough: `confirmKey`).
 */
export function cacheKeys(method: string, p: unknown[]): { cacheKey?: string; confirmKey?: string } {
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

/** A call answered here with error `code` and `message` in its envelope. */
function local(code: number, message: string, state: CallState, notification: boolean): Planned {
  return { kind: 'local', text: errorText(code, message, state), code, notification, state: { ...state } };
}

/** The long-poll bound: Core's timeout 0 (or none) would wait for ever, and one in a batch would hold it all. */
function checkLongPoll(ctx: RpcContext, method: string, positional: unknown[] | undefined, inBatch: boolean): void {
  if (inBatch) throw new ParamError(`${method} is a long poll: send it alone, not in a batch`);
  const timeout = positional?.[0];
  if (typeof timeout !== 'number' || timeout < 1 || timeout > ctx.longPollMaxMs) {
    throw new ParamError(`invalid parameter "timeout": ${method} needs a timeout from 1 to ${ctx.longPollMaxMs} ms through this proxy`);
  }
}

/**
 * The third stage, for each call of a request: answered here (a malformed request object, a
 * method not allowed for the caller: -32601, parameters of the wrong shape: -32602, a cache
 * hit) or forwarded to the node. `state` is the envelope state Core carries through a batch.
 */
export function plan(ctx: RpcContext, element: unknown, state: CallState, allowed: Set<string>, inBatch = false): Planned {
  let method: string;
  let params: unknown[] | Record<string, unknown>;
  try {
    ({ method, params } = parseCall(element, state));
  } catch (err) {
    const e = err as EnvelopeError;
    return local(e.code, e.message, state, isNotification(state));
  }
  const notification = isNotification(state);
  if (!allowed.has(method)) return local(RPC_ERROR_CODES.METHOD_NOT_FOUND, 'Method not found', state, notification);
  let positional: unknown[] | undefined;
  try {
    positional = checkParams(method, params);
    if (LONG_POLL_METHODS.has(method)) checkLongPoll(ctx, method, positional, inBatch);
  } catch (err) {
    if (!(err instanceof ParamError)) throw err;
    return local(RPC_ERROR_CODES.INVALID_PARAMS, err.message, state, notification);
  }
  const snapshot = { ...state };
  const keys = positional ? cacheKeys(method, positional) : {};
  const key = keys.cacheKey ?? keys.confirmKey;
  const cached = key === undefined ? undefined : ctx.cache.get(key);
  if (cached !== undefined) return { kind: 'local', cached, notification, state: snapshot };
  return { kind: 'forward', element, notification, state: snapshot, method, params, ...keys };
}
