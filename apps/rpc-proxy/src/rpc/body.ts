import type { IncomingMessage } from 'node:http';
import { RPC_ERROR_CODES } from '@repo/errors';
import { coreAcceptsStrings, errorText, initialState, type CallState } from '@repo/json-rpc';
import { scanBody, type BodyScan } from '../body-scan';
import { JSON_HEADERS, send, type Handled, type RpcContext, type RpcExchange } from './context';

/**
 * Deepest nesting of arrays and objects accepted: Bitcoin Core's own bound (MAX_JSON_DEPTH in
 * src/univalue/lib/univalue_read.cpp), checked on the bytes before JSON.parse, so a body of
 * millions of `[` costs a scan and is answered as Core would (a parse error).
 */
export const MAX_JSON_DEPTH = 512;

/** A request body: its bytes, or `too-large` past the limit. */
export type Body = Buffer | 'too-large';

/** A body parsed: the bytes, the value JSON.parse gave, and the scan of the bytes (src/body-scan.ts). */
export interface ParsedBody {
  raw: Buffer;
  value: unknown;
  scan: BodyScan;
}

/** Reads a request's body, at most `limit` bytes (an announced larger length is refused before a byte is read). */
export function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve) => {
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        resolve('too-large');
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
      done = true;
    });
    req.on('error', () => {
      if (!done) resolve(Buffer.alloc(0));
      done = true;
    });
  });
}

/**
 * The second stage: an authenticated request's body. A body that came whole with its head (what
 * clients send: node:http has it all by the next turn of the event loop) is read without a slot;
 * one still arriving then takes one of MAX_CONCURRENT_BODIES (a quarter per address), so slow
 * bodies cannot hold the proxy's memory: past them 503 with `Retry-After: 1`, connection closed.
 */
export function readAuthenticatedBody(ctx: RpcContext, x: RpcExchange, user: string): Promise<Body | Handled> {
  const address = x.req.socket.remoteAddress ?? 'unknown';
  let slot = false;
  return new Promise((resolve) => {
    const reading = readBody(x.req, ctx.maxBodyBytes);
    const check = setImmediate(() => {
      if (x.req.complete) return;
      slot = ctx.slots.take(address);
      if (slot) return;
      // Refused: the rest of the body is read past, not kept.
      x.req.removeAllListeners('data');
      x.req.resume();
      x.res.setHeader('Connection', 'close');
      const message = 'too many request bodies being read: retry after 1 s';
      send(x, 503, `${errorText(RPC_ERROR_CODES.INTERNAL_ERROR, message, initialState())}\n`, [...JSON_HEADERS, 'Retry-After', '1']);
      resolve({ status: 503, rpc: '-', user });
    });
    void reading.then((body) => {
      clearImmediate(check);
      if (slot) ctx.slots.release(address);
      resolve(body);
    });
  });
}

/**
 * Parses a body as Core would read it: past MAX_BODY_BYTES 413 (connection closed); nested
 * deeper than Core's bound, not JSON, or with a string Core refuses (invalid UTF-8, a lone
 * surrogate): -32700 "Parse error", HTTP 500. Returns the parsed body, or what the request came
 * to (answered here).
 */
export function parseBody(ctx: RpcContext, x: RpcExchange, user: string, body: Body): ParsedBody | Handled {
  if (body === 'too-large') {
    x.res.setHeader('Connection', 'close');
    const message = `request body larger than ${ctx.maxBodyBytes} bytes`;
    send(x, 413, `${errorText(RPC_ERROR_CODES.INVALID_REQUEST, message, initialState())}\n`);
    return { status: 413, rpc: '-', user };
  }
  // One pass over the bytes before the parse: the nesting bound, and what JSON.parse hides (src/body-scan.ts).
  const scan = scanBody(body, MAX_JSON_DEPTH);
  try {
    if (scan.depth > MAX_JSON_DEPTH) throw new Error('nested too deep');
    const value = JSON.parse(body.toString('utf8')) as unknown;
    // Invalid UTF-8 or a lone surrogate in any string: Core refuses the whole body (a parse error).
    if (!scan.asciiStrings && !coreAcceptsStrings(body)) throw new Error('a string Core would not read');
    return { raw: body, value, scan };
  } catch {
    send(x, 500, `${errorText(RPC_ERROR_CODES.PARSE_ERROR, 'Parse error', initialState())}\n`);
    return { status: 500, rpc: '-', user };
  }
}

/** The id of a single request object, for the 401 envelope (null when there is none to find). */
export function idOf(body: Body): CallState {
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
