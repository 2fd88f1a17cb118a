import { Router, type RequestHandler } from 'express';
import { AppError } from '@repo/errors';
import { BackendUnavailableError, type StorageBackend } from '../backends/backend';
import { parseKey, parseStoreRequest } from '../validation';

/** Options of {@link createStorageRouter}. */
export interface StorageRouterOptions {
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

function methodNotAllowed(allow: string): RequestHandler {
  return function methodNotAllowed(req, _res, next) {
    next(new AppError('METHOD_NOT_ALLOWED', { message: `method not allowed: ${req.method} (use ${allow})`, headers: { Allow: allow } }));
  };
}

/** Path prefixes every route answers on: behind the proxy and alone (docs/storage.md, "Endpoints"). */
export const ROUTE_PREFIXES = ['/storage', ''] as const;

/** The store and retrieve endpoints (docs/storage.md, "Endpoints"), on both path prefixes. */
export function createStorageRouter(options: StorageRouterOptions): Router {
  const { backend, now } = options;
  const router = Router();

  const store: RequestHandler = async function store(req, res) {
    const input = parseStoreRequest(req.body, options.maxTtlSeconds);
    const ttl = input.ttl ?? (options.permanent ? null : options.defaultTtlSeconds);
    const t = now();
    const result = await backend.put(input.key, input.value, ttl, t).catch((err: unknown) => {
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
    });
  };

  const retrieve: RequestHandler = async function retrieve(req, res) {
    const key = parseKey(req.params.key);
    const value = await backend.get(key, now()).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (value === undefined) {
      throw new AppError('NOT_FOUND', { message: 'key not found: no value is stored under this key, or it has expired' });
    }
    res.json({ key, value });
  };

  // One router with plain routes for both prefixes: cheaper per request than mounting a
  // router twice, which runs every request through both.
  for (const prefix of ROUTE_PREFIXES) {
    router.post(`${prefix}/store`, store);
    router.all(`${prefix}/store`, methodNotAllowed('POST'));
    router.get(`${prefix}/retrieve/:key`, retrieve);
    router.all(`${prefix}/retrieve/:key`, methodNotAllowed('GET'));
  }
  return router;
}
