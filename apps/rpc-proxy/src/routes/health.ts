import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@repo/service';
import { NodeError, parseReply, type NodeClient, type NodeFailure } from '../node-client';

/** Why the proxy is not ready (`GET /ready`'s `reason`). */
export type UnreadyReason =
  | 'node-unreachable'
  | 'node-timeout'
  | 'node-garbage'
  | 'node-busy'
  | 'credentials-refused'
  | 'cookie-unreadable'
  | 'proxy-queue-full'
  | 'node-error';

const REASONS: Record<NodeFailure, UnreadyReason> = {
  unreachable: 'node-unreachable',
  timeout: 'node-timeout',
  garbage: 'node-garbage',
  busy: 'node-busy',
  auth: 'credentials-refused',
  cookie: 'cookie-unreadable',
  queue: 'proxy-queue-full',
};

/** The answer of one readiness probe. */
interface Probe {
  status: 200 | 503;
  body: Record<string, unknown>;
}

/** A probe's answer is reused this long, so a busy health checker cannot flood the node. */
const PROBE_REUSE_MS = 500;
const PROBE_BODY = '{"jsonrpc":"1.0","id":"rpc-proxy-ready","method":"getblockchaininfo","params":[]}';

/** What {@link createHealthHandler} needs. */
export interface HealthHandlerDeps {
  node: NodeClient;
  logger: Logger;
}

/**
 * The proxy's own endpoints (docs/rpc-proxy.md, "Health and readiness"), answered before the
 * JSON-RPC endpoint, without authentication:
 * - `GET /health`: 200 `{"status":"ok"}` while the process serves.
 * - `GET /ready`: 200 `{"status":"ready","node":{chain,blocks,headers,initialblockdownload}}`
 *   when the node answers an authenticated `getblockchaininfo` (a node still in its initial
 *   block download is ready for the proxy: it answers), else 503
 *   `{"status":"unready","reason":…,"message":…}` (reason: node-unreachable,
 *   credentials-refused, cookie-unreadable, node-timeout, node-busy, node-garbage,
 *   proxy-queue-full when the probe finds the proxy's own queue toward the node full,
 *   node-error for a JSON-RPC error such as -28 while the node loads).
 * Returns false for any other request (left to the JSON-RPC handler).
 */
export function createHealthHandler(deps: HealthHandlerDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  let inFlight: Promise<Probe> | undefined;
  let last: { at: number; probe: Probe } | undefined;
  let lastReason: string | undefined = 'starting';

  async function probe(): Promise<Probe> {
    try {
      const reply = await deps.node.call('/', PROBE_BODY);
      const value = parseReply(reply) as { result?: Record<string, unknown> | null; error?: { code?: number; message?: string } | null };
      if (value.error) {
        return {
          status: 503,
          body: { status: 'unready', reason: 'node-error', message: `node answered ${value.error.code}: ${value.error.message}` },
        };
      }
      const r = value.result ?? {};
      return {
        status: 200,
        body: {
          status: 'ready',
          node: { chain: r.chain, blocks: r.blocks, headers: r.headers, initialblockdownload: r.initialblockdownload },
        },
      };
    } catch (err) {
      if (!(err instanceof NodeError)) throw err;
      return { status: 503, body: { status: 'unready', reason: REASONS[err.kind], message: err.message } };
    }
  }

  function answer(res: ServerResponse, status: number, body: unknown, head: boolean): void {
    const text = `${JSON.stringify(body)}\n`;
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(text)),
      'Cache-Control': 'no-store',
    });
    res.end(head ? undefined : text);
  }

  async function ready(res: ServerResponse, head: boolean): Promise<void> {
    let result: Probe;
    if (last !== undefined && Date.now() - last.at < PROBE_REUSE_MS) result = last.probe;
    else {
      inFlight ??= probe().finally(() => {
        inFlight = undefined;
      });
      result = await inFlight;
      last = { at: Date.now(), probe: result };
    }
    const reason = result.status === 200 ? undefined : String(result.body.reason);
    if (reason !== lastReason) {
      if (reason === undefined) deps.logger.info({ node: result.body.node }, 'ready: the node answers');
      else deps.logger.warn({ reason, message: result.body.message }, 'not ready');
      lastReason = reason;
    }
    answer(res, result.status, result.body, head);
  }

  return function ops(req, res) {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/health' && path !== '/ready') return false;
    req.resume();
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': '0' }).end();
      return true;
    }
    if (path === '/health') answer(res, 200, { status: 'ok' }, head);
    else
      ready(res, head).catch((err: unknown) => {
        deps.logger.error({ err }, 'readiness probe failed');
        if (!res.headersSent) answer(res, 503, { status: 'unready', reason: 'node-error', message: 'internal error' }, head);
      });
    return true;
  };
}
