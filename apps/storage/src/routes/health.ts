import { Router, type RequestHandler } from 'express';
import { AppError } from '@repo/errors';
import type { StorageBackend } from '../backends/backend';
import { ROUTE_PREFIXES } from './storage';

/** Version of this service's API, in the health answer. */
export const SERVICE_VERSION = '1.0.0';

/** What {@link createHealthRouter} needs. */
export interface HealthRouterDeps {
  backend: StorageBackend;
  permanent: boolean;
}

/**
 * `GET /health` (and `/storage/health`): 200 `{status: "healthy", …}` when the backend answers, 503
 * `SERVICE_UNAVAILABLE` when it does not (so a load balancer stops sending stores here).
 */
export function createHealthRouter(options: HealthRouterDeps): Router {
  const router = Router();
  const health: RequestHandler = async function health(_req, res) {
    try {
      await options.backend.ping();
    } catch (err) {
      throw new AppError('SERVICE_UNAVAILABLE', { details: 'storage backend unavailable', cause: err });
    }
    res.json({
      status: 'healthy',
      service: 'storage',
      version: SERVICE_VERSION,
      backend: options.backend.name,
      permanent: options.permanent,
      timestamp: new Date().toISOString(),
    });
  };
  /**
   * `GET /ready` (docs/README.md, "Operations"): 200 `{status: "ready"}` when the backend answers,
   * 503 `{status: "unready", reason: "backend-unavailable", message}` when it does not.
   */
  const ready: RequestHandler = async function ready(_req, res) {
    res.setHeader('Cache-Control', 'no-store');
    try {
      await options.backend.ping();
    } catch (err) {
      res.status(503).json({
        status: 'unready',
        reason: 'backend-unavailable',
        message: `the ${options.backend.name} backend does not answer: ${(err as Error).message}`,
      });
      return;
    }
    res.json({ status: 'ready', backend: options.backend.name });
  };
  for (const prefix of ROUTE_PREFIXES) {
    router.get(`${prefix}/health`, health);
    router.get(`${prefix}/ready`, ready);
  }
  return router;
}
