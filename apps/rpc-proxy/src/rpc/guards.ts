import { RPC_ERROR_CODES } from '@repo/errors';
import { rateLimitHeaders } from '@repo/http';
import { errorText, initialState } from '@repo/json-rpc';
import { idOf, readBody } from './body';
import { HTML_HEADERS, JSON_HEADERS, send, type Handled, type RpcContext, type RpcExchange } from './context';

/** Unauthenticated clients get their body read only this far (for the id of the 401 envelope). */
const UNAUTHENTICATED_BODY_LIMIT = 64 * 1024;

/** Whether the wallet name of a `/wallet/<name>` URI is well-formed percent-encoding (Core decodes it). */
function walletNameDecodes(path: string): boolean {
  try {
    decodeURIComponent(path.slice('/wallet/'.length));
    return true;
  } catch {
    return false;
  }
}

/**
 * The first stage: what is refused before a body is read, in bitcoind's order. Unknown paths
 * (404, before authentication, matching the whole URI as bitcoind does: `/` exactly, `/wallet/`
 * as a prefix), other HTTP methods (405), a wallet name that is not valid percent-encoding (400,
 * docs/README.md, "Malformed requests"), the rate limit (429) and authentication (401). Returns
 * the authenticated user, or what the request came to when it was refused (answered here).
 */
export function guard(ctx: RpcContext, x: RpcExchange): { user: string } | Handled | Promise<Handled> {
  const { req, path } = x;
  if (path !== '/' && !path.startsWith('/wallet/')) {
    req.resume();
    send(x, 404, '', HTML_HEADERS);
    return { status: 404, rpc: '-' };
  }
  if (req.method !== 'POST') {
    req.resume();
    send(x, 405, 'JSONRPC server handles only POST requests', HTML_HEADERS);
    return { status: 405, rpc: '-' };
  }
  if (path !== '/' && !walletNameDecodes(path)) {
    req.resume();
    const message = 'malformed percent-encoding in the wallet name';
    send(x, 400, `${errorText(RPC_ERROR_CODES.INVALID_REQUEST, message, initialState())}\n`);
    return { status: 400, rpc: '-' };
  }
  const decision = ctx.limiter.take(x.ip);
  if (!decision.allowed) {
    req.resume();
    const body = `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, `rate limit exceeded: retry after ${decision.retryAfter} s`, initialState())}\n`;
    send(x, 429, body, [...JSON_HEADERS, ...Object.entries(rateLimitHeaders(decision)).flat()]);
    return { status: 429, rpc: '-' };
  }
  const who = ctx.auth.check(req.headers.authorization);
  if (!who.ok) return refuse(ctx, x, who.reason);
  return { user: who.user };
}

/** The 401 of a request without valid credentials (its body read this far for the id of the envelope). */
async function refuse(ctx: RpcContext, x: RpcExchange, reason: 'missing' | 'invalid'): Promise<Handled> {
  const body = await readBody(x.req, UNAUTHENTICATED_BODY_LIMIT);
  // Like bitcoind, wrong credentials are answered late to slow down guessing; none at all, at once.
  if (reason === 'invalid' && ctx.authFailureDelayMs > 0) await new Promise((r) => setTimeout(r, ctx.authFailureDelayMs));
  const message = reason === 'missing' ? 'authentication required' : 'incorrect credentials';
  send(x, 401, `${errorText(RPC_ERROR_CODES.MISC_ERROR, message, idOf(body))}\n`, [
    ...JSON_HEADERS,
    'WWW-Authenticate',
    'Basic realm="jsonrpc"',
  ]);
  return { status: 401, rpc: '-' };
}
