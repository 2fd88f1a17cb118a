import type { IncomingMessage, ServerResponse } from 'node:http';
import { RPC_ERROR_CODES } from '@repo/errors';
import { clientAddress, newRequestId, TRUST_NONE } from '@repo/http';
import { errorText, initialState } from '@repo/json-rpc';
import { methodsFor } from '../policy';
import { parseBody, readAuthenticatedBody } from '../rpc/body';
import {
  createRpcContext,
  send,
  type Handled,
  type JsonRpcHandlerDeps,
  type Outcome,
  type RpcContext,
  type RpcExchange,
} from '../rpc/context';
import { forwardBatch, forwardSingle } from '../rpc/forward';
import { guard } from '../rpc/guards';

export type { JsonRpcHandlerDeps } from '../rpc/context';

/** The stages of one request: guards → body → plan and forward (src/rpc/). */
async function handle(ctx: RpcContext, x: RpcExchange): Promise<Handled> {
  const guarded = await guard(ctx, x);
  if ('status' in guarded) return guarded;
  const { user } = guarded;
  const body = await readAuthenticatedBody(ctx, x, user);
  if (typeof body === 'object' && !Buffer.isBuffer(body)) return body;
  const parsed = parseBody(ctx, x, user, body);
  if (!('raw' in parsed)) return parsed;
  const allowed = methodsFor(user, ctx.allowedMethods, ctx.userMethods);
  let outcome: Outcome;
  if (Array.isArray(parsed.value)) outcome = await forwardBatch(ctx, x, parsed, allowed);
  else if (parsed.value === null || typeof parsed.value !== 'object') {
    const text = `${errorText(RPC_ERROR_CODES.PARSE_ERROR, 'Top-level object parse error', initialState())}\n`;
    outcome = { status: 500, text, rpc: '-' };
  } else outcome = await forwardSingle(ctx, x, parsed, allowed);
  send(x, outcome.status, outcome.text, outcome.headers);
  return { status: outcome.status, rpc: outcome.rpc, user };
}

/** Records and logs a request once it was answered (docs/README.md, "Logging"): the path without its query, which may carry secrets. */
function finish(ctx: RpcContext, x: RpcExchange, started: number, { status, rpc, user }: Handled): void {
  const ms = performance.now() - started;
  ctx.record?.(x.req, x.res.headersSent ? status : 0, ms / 1000);
  if (!ctx.logger.isLevelEnabled('info')) return;
  const query = x.path.indexOf('?');
  const path = query < 0 ? x.path : x.path.slice(0, query);
  const line = { method: x.req.method, path, status, rpc, user, ip: x.ip, request_id: x.id, ms: Math.round(ms * 100) / 100 };
  ctx.logger.info(line, 'request');
}

/**
 * The JSON-RPC endpoint: POST `/` and `/wallet/<name>`, answered as bitcoind answers (see
 * packages/chain-double/fixtures/bitcoind), with the proxy's own rules in front: rate limit,
 * authentication, allow-lists (-32601), parameter checks (-32602), node failures (-32603), cache.
 */
export function createJsonRpcHandler(deps: JsonRpcHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const ctx = createRpcContext(deps);
  return function jsonRpc(req, res) {
    const started = performance.now();
    const x: RpcExchange = {
      req,
      res,
      id: newRequestId(req, ctx.trustProxy),
      ip: clientAddress(req, ctx.trustProxy ?? TRUST_NONE),
      path: req.url ?? '/',
    };
    handle(ctx, x).then(
      (handled) => finish(ctx, x, started, handled),
      (err: unknown) => {
        ctx.logger.error({ err }, 'unexpected error');
        const recorded = res.headersSent;
        send(x, 500, `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, 'internal error', initialState())}\n`);
        if (!recorded) ctx.record?.(req, res.headersSent ? 500 : 0, (performance.now() - started) / 1000);
      },
    );
  };
}
