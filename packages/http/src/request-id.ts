import { randomFillSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { fromTrustedProxy, TRUST_NONE, type RequestHead, type TrustProxy } from './trust-proxy';

/** The header that carries a request id, in and out (docs/README.md, "Request ids"). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** An id a proxy may send: 1 to 128 characters of letters, digits and `-_.:@/+=`. */
const SAFE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Whether `value` is an acceptable request id. */
export function isValidRequestId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_ID.test(value);
}

const IDS = new WeakMap<RequestHead, string>();

/**
 * The request's id: `X-Request-Id` when a trusted proxy sent a valid one, else a fresh UUID;
 * the same value for every call on one request.
 */
export function requestIdOf(req: RequestHead, trust: TrustProxy = TRUST_NONE): string {
  let id = IDS.get(req);
  if (id !== undefined) return id;
  id = newRequestId(req, trust);
  IDS.set(req, id);
  return id;
}

/**
 * The id {@link requestIdOf} gives a request, not remembered: for a handler that is the only one
 * to ask (a second call gives another UUID).
 */
export function newRequestId(req: RequestHead, trust: TrustProxy = TRUST_NONE): string {
  const sent = req.headers['x-request-id'];
  return isValidRequestId(sent) && fromTrustedProxy(req, trust) ? sent : uuid();
}

/** Random bytes for {@link uuid}, drawn 256 UUIDs at a time (as `randomUUID` keeps 128). */
const RANDOM = Buffer.alloc(16 * 256);
let drawn = RANDOM.length;
/** The text of one UUID, written here and read as one string. */
const TEXT = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` gives it, read from its bytes in one piece:
 * Node's own is a string of twenty concatenated pieces, which is flattened again by whatever reads
 * it (the answer's head and the log line each request).
 */
export function uuid(): string {
  if (drawn === RANDOM.length) {
    randomFillSync(RANDOM);
    drawn = 0;
  }
  let o = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) TEXT[o++] = 0x2d;
    let b = RANDOM[drawn + i] as number;
    if (i === 6)
      b = (b & 0x0f) | 0x40; // version 4
    else if (i === 8) b = (b & 0x3f) | 0x80; // variant 10
    TEXT[o++] = HEX[b >> 4] as number;
    TEXT[o++] = HEX[b & 0x0f] as number;
  }
  drawn += 16;
  return TEXT.toString('latin1');
}

/** Assigns the request's id and echoes it in the response's `X-Request-Id`; returns it. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse, trust: TrustProxy = TRUST_NONE): string {
  const id = requestIdOf(req, trust);
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** Express middleware: {@link assignRequestId} on every request (put it first). */
export function requestId(trust: TrustProxy = TRUST_NONE): RequestHandler {
  return function requestId(req, res, next) {
    assignRequestId(req, res, trust);
    next();
  };
}
