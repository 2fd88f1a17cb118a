import { clientAddress, defaultReserve, duplicateHostError, hasDuplicateHost, TRUST_NONE, type TrustProxy } from '@repo/http';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { equalStrings } from '@repo/crypto';
import { throttledLog, type Logger } from '@repo/service';
import type { Scope } from '@repo/relay-protocol';
import type { ConnectionRoles } from './connection';
import { ALL_SCOPES } from './scopes';
import type { RelayCounters } from './status';

const BEARER_RE = /^Bearer\s+(\S+)$/i;

/**
 * Reads the token of an upgrade request: `Authorization: Bearer <t>` (RFC 6750 2.1) or
 * `?token=<t>` (browsers cannot set headers on a WebSocket). `''`: an Authorization header that
 * is not a bearer token; undefined: none given.
 */
export function requestToken(req: Pick<IncomingMessage, 'headers' | 'url'>): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const match = BEARER_RE.exec(header.trim());
    if (match) return match[1];
    return '';
  }
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if (q >= 0) {
    const token = new URLSearchParams(url.slice(q + 1)).get('token');
    if (token !== null) return token;
  }
  return undefined;
}

/** A client token of the token file (docs/relay.md, "Client tokens"). */
export interface ClientToken {
  name: string;
  scopes: ReadonlySet<Scope>;
}

/** The tokens an upgrade is checked against. */
export interface Credentials {
  publishToken: string;
  meshToken: string;
  /** RELAY_AUTH_TOKEN: when set, a connection without a valid token is refused. */
  authToken: string | undefined;
  /** Looks a token up in the token file (constant-time comparison inside). */
  clientToken: (token: string) => ClientToken | undefined;
  /** RELAY_PAYMENTS_PUBLIC: payment events go to every client. */
  paymentsPublic: boolean;
}

/** The outcome of {@link authorize}. */
export type Authorization = { ok: true; roles: ConnectionRoles } | { ok: false };

/**
 * Decides, once per connection, what the presented token allows: the publish token publishes,
 * the mesh token peers, a token-file token gets its scopes, RELAY_AUTH_TOKEN and no token (when
 * RELAY_AUTH_TOKEN is unset) get `events` (plus `payments` when they are public). A token that
 * matches nothing is refused even on an open relay: a typo should fail loudly.
 */
export function authorize(token: string | undefined, c: Credentials): Authorization {
  const publicScopes: ReadonlySet<Scope> = c.paymentsPublic ? ALL_SCOPES : new Set<Scope>(['events']);
  if (token === undefined) {
    return c.authToken === undefined ? { ok: true, roles: { ...roles(false, false, publicScopes), anonymous: true } } : { ok: false };
  }
  if (token === '') return { ok: false };
  // Compare with every secret (no early exit), each in constant time.
  const publisher = equalStrings(token, c.publishToken);
  const meshAllowed = equalStrings(token, c.meshToken);
  const shared = c.authToken !== undefined && equalStrings(token, c.authToken);
  const fromFile = c.clientToken(token);
  if (publisher || meshAllowed) return { ok: true, roles: roles(publisher, meshAllowed, ALL_SCOPES) };
  if (fromFile !== undefined) {
    const scopes = c.paymentsPublic ? new Set<Scope>([...fromFile.scopes, 'payments']) : fromFile.scopes;
    return { ok: true, roles: { ...roles(false, false, scopes), tokenName: fromFile.name } };
  }
  if (shared) return { ok: true, roles: roles(false, false, publicScopes) };
  return { ok: false };
}

function roles(publisher: boolean, meshAllowed: boolean, scopes: ReadonlySet<Scope>): ConnectionRoles {
  return { publisher, meshAllowed, scopes };
}

/** Answers an upgrade request with a plain HTTP error and closes the socket (before any handshake). */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  reason: string,
  code: string,
  message: string,
  extra: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error: { code, message } });
  const headers = {
    Connection: 'close',
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    ...extra,
  };
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Options of {@link createUpgradeHandler}. */
export interface UpgradeHandlerOptions {
  /** The server that completes the handshake of a connection with these roles (its `maxPayload` binds its frames). */
  wss: (roles: ConnectionRoles) => WebSocketServer;
  credentials: () => Credentials;
  maxConnections: number;
  counters: RelayCounters;
  logger: Logger;
  isClosed: () => boolean;
  /** Whose `X-Forwarded-For` names the client (docs/README.md, "Trusted proxies"); default none. */
  trustProxy?: TrustProxy;
  /** Called with every accepted connection, its `ip:port`, what it may do, its ip and the upgrade's URL. */
  onConnection: (ws: WebSocket, address: string, roles: ConnectionRoles, ip: string, url: string) => void;
}

/** The `upgrade` handler: authorization and the connection limit, before any WebSocket handshake. */
export interface UpgradeHandler {
  (req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Accepted connections still open. */
  readonly open: number;
}

/**
 * Creates the server's `upgrade` handler (the `ws` library's `noServer` mode). Of the
 * `maxConnections` slots, the last tenth (as `@repo/http`'s guards keep) is for addresses with no
 * connection open or pending, so a few addresses holding idle sockets cannot turn newcomers away.
 */
export function createUpgradeHandler(options: UpgradeHandlerOptions): UpgradeHandler {
  const { wss, counters, logger, maxConnections } = options;
  const shared = maxConnections - Math.min(defaultReserve(maxConnections), maxConnections - 1);
  const byIp = new Map<string, number>();
  const release = (ip: string) => {
    const n = (byIp.get(ip) ?? 1) - 1;
    if (n <= 0) byIp.delete(ip);
    else byIp.set(ip, n);
  };
  let open = 0;
  let pending = 0;
  const warnFull = throttledLog((fields, message) => logger.warn(fields, message), { everyMs: 1_000, countAs: 'refusals' });
  const handler = function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (options.isClosed()) {
      counters.upgrades_refused++;
      refuseUpgrade(socket, 503, 'Service Unavailable', 'SERVICE_UNAVAILABLE', 'relay is shutting down');
      return;
    }
    if (hasDuplicateHost(req)) {
      counters.upgrades_refused++;
      refuseUpgrade(socket, 400, 'Bad Request', 'INVALID_REQUEST', duplicateHostError().message);
      return;
    }
    const auth = authorize(requestToken(req), options.credentials());
    if (!auth.ok) {
      counters.upgrades_refused++;
      refuseUpgrade(socket, 401, 'Unauthorized', 'UNAUTHORIZED', 'a valid token is required (Authorization: Bearer <token> or ?token=)', {
        'WWW-Authenticate': 'Bearer realm="relay"',
      });
      return;
    }
    const ip = clientAddress(req, options.trustProxy ?? TRUST_NONE);
    const taken = open + pending;
    if (taken >= maxConnections || (taken >= shared && byIp.has(ip))) {
      counters.upgrades_refused++;
      warnFull({ open, max: maxConnections, ip, reserve: maxConnections - shared }, 'upgrade refused: too many connections');
      refuseUpgrade(socket, 503, 'Service Unavailable', 'SERVICE_UNAVAILABLE', `too many connections (limit ${maxConnections})`, {
        'Retry-After': '5',
      });
      return;
    }
    pending++;
    byIp.set(ip, (byIp.get(ip) ?? 0) + 1);
    let settled = false;
    const settle = () => {
      if (!settled) {
        settled = true;
        pending--;
      }
    };
    const abandoned = () => {
      settle();
      release(ip);
    };
    socket.once('close', abandoned);
    wss(auth.roles).handleUpgrade(req, socket, head, (ws) => {
      settle();
      socket.off('close', abandoned);
      if (options.isClosed()) {
        release(ip);
        ws.terminate();
        return;
      }
      open++;
      ws.once('close', () => {
        open--;
        release(ip);
      });
      options.onConnection(ws, `${ip}:${req.socket.remotePort ?? 0}`, auth.roles, ip, req.url ?? '/');
    });
  } as UpgradeHandler;
  Object.defineProperty(handler, 'open', { get: () => open });
  return handler;
}
