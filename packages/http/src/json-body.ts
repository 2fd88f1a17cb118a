import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /** Largest body accepted, in bytes; an announced `Content-Length` above it is refused at once (413). */
  limitBytes: number;
  /** Deepest nesting of arrays and objects accepted (default 32). */
  maxDepth?: number;
  /** Bodies read and parsed at once, at most; past it 503 `SERVICE_UNAVAILABLE` with `Retry-After` (default 16). */
  maxConcurrent?: number;
  /**
   * Of those, bodies one client address may have in reading at once (default a quarter of
   * `maxConcurrent`, at least 1), so one slow client cannot take every slot.
   */
  maxConcurrentPerAddress?: number;
}

/** Counts bodies being read, in all and per client address, against their two bounds. */
export interface BodySlots {
  /** Takes a slot for `address`; false when either bound is reached. */
  take(address: string): boolean;
  release(address: string): void;
}

/** Slots for bodies being read: `max` in all, `perAddress` for one address. */
export function createBodySlots(max: number, perAddress = Math.max(1, Math.floor(max / 4))): BodySlots {
  let active = 0;
  const byAddress = new Map<string, number>();
  return {
    take(address) {
      const mine = byAddress.get(address) ?? 0;
      if (active >= max || mine >= perAddress) return false;
      active++;
      byAddress.set(address, mine + 1);
      return true;
    },
    release(address) {
      active--;
      const mine = (byAddress.get(address) ?? 1) - 1;
      if (mine <= 0) byAddress.delete(address);
      else byAddress.set(address, mine);
    },
  };
}

/** Default nesting bound of {@link jsonBody}. */
export const DEFAULT_MAX_JSON_DEPTH = 32;
/** Default bound on bodies parsed at once. */
export const DEFAULT_MAX_CONCURRENT_BODIES = 16;

/**
 * The deepest nesting of `[` and `{` in JSON text, skipping strings; stops (returning a value over
 * `max`) as soon as `max` is passed. One pass over the bytes, run before `JSON.parse` so a body of
 * ten million `[` costs a scan, not a parse (JSON is RFC 8259; its section 9 lets a parser bound depth).
 */
export function jsonDepth(bytes: Uint8Array, max: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
      continue;
    }
    if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return deepest;
}

function hasBody(req: IncomingMessage): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
  );
}

/**
 * Reads a JSON body into `req.body`, bounded three ways: its size (413 `PAYLOAD_TOO_LARGE`, at once
 * when `Content-Length` announces more), its nesting depth (400 `INVALID_REQUEST`, checked on the
 * raw bytes before parsing) and the number of bodies being read at once (503 `SERVICE_UNAVAILABLE`,
 * `Retry-After: 1`). Like `express.json()`, only `application/json` bodies are read; others leave
 * `req.body` undefined; an empty body is `{}`. Every refusal closes the connection (the rest of the
 * body is not read).
 */
export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const limit = options.limitBytes;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_BODIES;
  const slots = createBodySlots(maxConcurrent, options.maxConcurrentPerAddress);
  return function jsonBody(req, res, next) {
    if (req.body !== undefined || !hasBody(req) || req.is('application/json') === false) {
      next();
      return;
    }
    const refuse = (error: AppError) => {
      res.setHeader('Connection', 'close');
      next(error);
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      refuse(new AppError('PAYLOAD_TOO_LARGE'));
      return;
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') {
      refuse(new AppError('UNSUPPORTED_MEDIA_TYPE', { details: `content-encoding ${encoding} is not accepted` }));
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    if (!slots.take(address)) {
      refuse(new AppError('SERVICE_UNAVAILABLE', { details: 'too many request bodies being read', headers: { 'Retry-After': '1' } }));
      return;
    }
    let done = false;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: AppError) => {
      if (done) return;
      done = true;
      slots.release(address);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error !== undefined) {
        req.pause();
        refuse(error);
        return;
      }
      const bytes = Buffer.concat(chunks, size);
      chunks.length = 0;
      if (bytes.length === 0) {
        req.body = {};
        next();
        return;
      }
      if (jsonDepth(bytes, maxDepth) > maxDepth) {
        refuse(
          new AppError('INVALID_REQUEST', {
            message: 'JSON body nested too deep',
            details: `at most ${maxDepth} levels of arrays and objects`,
          }),
        );
        return;
      }
      try {
        req.body = JSON.parse(bytes.toString('utf8')) as unknown;
      } catch {
        next(new AppError('INVALID_REQUEST', { message: 'malformed JSON body' }));
        return;
      }
      next();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(new AppError('PAYLOAD_TOO_LARGE'));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = () => finish(new AppError('INVALID_REQUEST', { message: 'request body could not be read' }));
    // The client went away before the end: release the slot; nobody is left to answer.
    const onClose = () => {
      if (done) return;
      done = true;
      slots.release(address);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  };
}
