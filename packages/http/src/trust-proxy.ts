import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import { ConfigError, type Env } from '@repo/config';

/**
 * Which hops are trusted to say who the client is (docs/README.md, "Trusted proxies"): express's
 * `trust proxy` function, `(address, hop) => boolean`, hop 0 being the socket's peer.
 */
export type TrustProxy = (address: string, hop: number) => boolean;

/** Trusts no proxy: the client is the socket's peer. */
export const TRUST_NONE: TrustProxy = () => false;

/**
 * Parses `TRUST_PROXY` as express's `trust proxy` setting takes it: empty or `false` (no proxy),
 * a hop count (`1`: the peer is a proxy, the address it appended is the client's), or a
 * comma-separated list of addresses and CIDRs, with express's names `loopback`, `linklocal`,
 * `uniquelocal`. `true` (trust every hop) is refused: any client could then name itself.
 * Throws an Error naming the bad entry.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy {
  const text = (value ?? '').trim();
  if (text === '' || text === 'false' || text === '0') return TRUST_NONE;
  if (text === 'true') throw new Error('true would trust every hop (any client could name its address): give a hop count or addresses');
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (!Number.isSafeInteger(hops) || hops > 32) throw new Error(`a hop count from 0 to 32, not ${text}`);
    return (_address, hop) => hop < hops;
  }
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    return proxyaddr.compile(entries);
  } catch (err) {
    throw new Error(`a hop count or a list of addresses/CIDRs: ${(err as Error).message}`);
  }
}

/**
 * What the functions below read of a request: its headers and its socket (a node:http request,
 * or a request a server read by other means with the same two fields).
 */
export type RequestHead = Pick<IncomingMessage, 'headers' | 'socket'>;

/**
 * The client's address: the socket's peer, or, when the peer is a trusted proxy, the nearest
 * untrusted address of `X-Forwarded-For` (express's `req.ip`, for servers that are not express).
 */
export function clientAddress(req: RequestHead, trust: TrustProxy): string {
  if (trust === TRUST_NONE) return req.socket.remoteAddress ?? 'unknown';
  // proxy-addr reads the request's `headers` and `socket` only.
  return proxyaddr(req as IncomingMessage, trust) || (req.socket.remoteAddress ?? 'unknown');
}

/** Whether the socket's peer is a trusted proxy (its `X-Forwarded-*` and `X-Request-Id` are believed). */
export function fromTrustedProxy(req: RequestHead, trust: TrustProxy): boolean {
  const peer = req.socket.remoteAddress;
  return peer !== undefined && trust !== TRUST_NONE && trust(peer, 0);
}

/** Reads `TRUST_PROXY` (see {@link parseTrustProxy}); a bad value is a ConfigError naming the variable. */
export function readTrustProxy(env: Env, name = 'TRUST_PROXY'): TrustProxy {
  try {
    return parseTrustProxy(env[name]);
  } catch (err) {
    throw new ConfigError(`${name} must be a hop count or a comma-separated list of addresses/CIDRs: ${(err as Error).message}`);
  }
}
