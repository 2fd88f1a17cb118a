import { Router, type RequestHandler } from 'express';
import { AppError } from '@repo/errors';
import { BackendUnavailableError, type StorageBackend, type WriteRefusal } from '../backends/backend';
import { parseKey, parseStoreRequest, parseTouchRequest } from '../validation';
import { createWriteToken, parseAuthorization } from '../write-token';

/** What {@link createStorageRouter} needs. */
export interface StorageRouterDeps {
  backend: StorageBackend;
  now: () => number;
  /** Values stored without `ttl` never expire. */
  permanent: boolean;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
}

function unavailable(err: unknown): unknown {
  return err instanceof BackendUnavailableError
    ? new AppError('SERVICE_UNAVAILABLE', { details: 'storage backend unavailable', cause: err })
    : err;
}

const NOT_FOUND_MESSAGE = 'key not found: no value is stored under this key, or it has expired';

/** The answer to a delete or touch the backend refused (docs/storage.md, "Write tokens"). */
function refused(reason: WriteRefusal): AppError {
  switch (reason) {
    case 'not_found':
      return new AppError('NOT_FOUND', { message: NOT_FOUND_MESSAGE });
    case 'no_token':
      return new AppError('ACCESS_DENIED', {
        message:
          'value has no write token: it was stored before write tokens existed, so it cannot be deleted or touched; it expires on its own',
      });
    case 'forbidden':
      return new AppError('ACCESS_DENIED', {
        message: 'write token does not match: only the holder of the write_token of this value can change it',
      });
  }
}

/** `expires_at` (ISO 8601 or null) and `ttl_remaining` (whole seconds, rounded up, or null) at `now`. */
function lifetime(expiresAt: number | null, now: number): { expires_at: string | null; ttl_remaining: number | null } {
  if (expiresAt === null) return { expires_at: null, ttl_remaining: null };
  return { expires_at: new Date(expiresAt).toISOString(), ttl_remaining: Math.ceil((expiresAt - now) / 1000) };
}

function methodNotAllowed(allow: string): RequestHandler {
  return function methodNotAllowed(req, _res, next) {
    next(new AppError('METHOD_NOT_ALLOWED', { message: `method not allowed: ${req.method} (use ${allow})`, headers: { Allow: allow } }));
  };
}

/** Path prefixes every route answers on: behind the proxy and alone (docs/storage.md, "Endpoints"). */
export const ROUTE_PREFIXES = ['/storage', ''] as const;

/**
 * The store and retrieve endpoints (docs/storage.md, "Endpoints"), and delete and touch with the
 * write token a store answers (docs/storage.md, "Write tokens"), on both path prefixes.
 */
export function createStorageRouter(options: StorageRouterDeps): Router {
  const { backend, now } = options;
  const router = Router();

  const store: RequestHandler = async function store(req, res) {
    const input = parseStoreRequest(req.body, options.maxTtlSeconds);
    const ttl = input.ttl ?? (options.permanent ? null : options.defaultTtlSeconds);
    const t = now();
    const writeToken = createWriteToken();
    const result = await backend.put(input.key, input.value, ttl, t, writeToken.hash).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (result === 'exists') {
      throw new AppError('CONFLICT', {
        message: 'key already exists: a value is stored under this key and has not expired',
      });
    }
    res.json({
      message: 'value stored',
      key: input.key,
      expires_at: ttl === null ? null : new Date(t + ttl * 1000).toISOString(),
      // Shown once: only its hash is kept, it cannot be asked for again.
      write_token: writeToken.token,
    });
  };

  const retrieve: RequestHandler = async function retrieve(req, res) {
    const key = parseKey(req.params.key);
    const t = now();
    const entry = await backend.get(key, t).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (entry === undefined) throw new AppError('NOT_FOUND', { message: NOT_FOUND_MESSAGE });
    res.json({ key, value: entry.value, ...lifetime(entry.expiresAt, t) });
  };

  const remove: RequestHandler = async function remove(req, res) {
    const key = parseKey(req.params.key);
    const tokenHash = parseAuthorization(req.headers.authorization);
    const result = await backend.delete(key, tokenHash, now()).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (result !== 'deleted') throw refused(result);
    res.json({ message: 'value deleted', key });
  };

  const touch: RequestHandler = async function touch(req, res) {
    const key = parseKey(req.params.key);
    const tokenHash = parseAuthorization(req.headers.authorization);
    const input = parseTouchRequest(req.body, options.maxTtlSeconds, options.permanent);
    // The rules of store: no ttl means the default lifetime (never, with the permanent option).
    const ttl = input.permanent ? null : (input.ttl ?? (options.permanent ? null : options.defaultTtlSeconds));
    const t = now();
    const result = await backend.touch(key, tokenHash, ttl, t).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (typeof result === 'string') throw refused(result);
    res.json({ message: 'expiry updated', key, ...lifetime(result.expiresAt, t) });
  };

  // One router with plain routes for both prefixes: cheaper per request than mounting a
  // router twice, which runs every request through both.
  for (const prefix of ROUTE_PREFIXES) {
    router.post(`${prefix}/store`, store);
    router.all(`${prefix}/store`, methodNotAllowed('POST'));
    router.get(`${prefix}/retrieve/:key`, retrieve);
    router.all(`${prefix}/retrieve/:key`, methodNotAllowed('GET'));
    router.post(`${prefix}/touch/:key`, touch);
    router.all(`${prefix}/touch/:key`, methodNotAllowed('POST'));
    // Last: `/:key` would otherwise take DELETE /store (405 above) as a key.
    router.delete(`${prefix}/:key`, remove);
  }
  return router;
}
