import { access, constants, stat } from 'node:fs/promises';
import { Router } from 'express';
import { AppError } from '@repo/errors';
import { ALGORITHM, ENCRYPTION_TYPE, SERVICE_ID } from '../constants';

/** What `/health` and `/ready` check. */
export interface HealthRouterDeps {
  storageDir: string;
  keysDir: string;
  /** Whether `start()` has loaded the keys and the certificate. */
  started: () => boolean;
}

/** Why the server is not ready, or undefined. */
export async function unreadyReason(options: HealthRouterDeps): Promise<{ reason: string; message: string } | undefined> {
  if (!options.started()) return { reason: 'starting', message: 'keys and certificate not loaded yet' };
  try {
    await access(options.storageDir, constants.R_OK | constants.X_OK);
  } catch (err) {
    return { reason: 'storage-unavailable', message: `STORAGE_DIR cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}` };
  }
  // The keys folder is optional (keys are derived from the master key unless a key file overrides one).
  const keys = await stat(options.keysDir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : err));
  if (keys instanceof Error) return { reason: 'keys-unavailable', message: `KEYS_DIR cannot be read: ${keys.code ?? 'error'}` };
  if (keys !== undefined) {
    try {
      await access(options.keysDir, constants.R_OK | constants.X_OK);
    } catch (err) {
      return { reason: 'keys-unavailable', message: `KEYS_DIR cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}` };
    }
  }
  return undefined;
}

/**
 * `GET /health` (docs/config-server.md, "Endpoints"): 200 while the storage directory can be read,
 * 500 `storage directory unavailable` otherwise. `GET /ready` (docs/README.md, "Operations"): 200
 * `{status: "ready"}` once the keys and the certificate are loaded and the storage and keys folders
 * can be read; 503 `{status: "unready", reason, message}` otherwise (reasons: `starting`,
 * `storage-unavailable`, `keys-unavailable`).
 */
export function createHealthRouter(options: HealthRouterDeps): Router {
  const router = Router();

  router.get('/health', async (_req, res) => {
    // Healthy means able to serve: the storage directory is readable.
    try {
      await access(options.storageDir, constants.R_OK | constants.X_OK);
    } catch (cause) {
      throw new AppError('INTERNAL_ERROR', { details: 'storage directory unavailable', cause });
    }
    res.json({ status: 'healthy', service: SERVICE_ID, encryption: ENCRYPTION_TYPE, algorithm: ALGORITHM });
  });

  router.get('/ready', async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const unready = await unreadyReason(options);
    if (unready === undefined) res.json({ status: 'ready' });
    else res.status(503).json({ status: 'unready', ...unready });
  });
  return router;
}
