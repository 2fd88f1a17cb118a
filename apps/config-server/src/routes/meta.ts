import { access, constants } from 'node:fs/promises';
import { Router } from 'express';
import { AppError } from '@repo/errors';
import { ALGORITHM, API_VERSION, ENCRYPTION_TYPE, SERVICE_ID, SERVICE_NAME } from '../constants';

/** What {@link createMetaRouter} needs. */
export interface MetaRouterDeps {
  storageDir: string;
  domain: string;
  port: number;
}

/** `GET /health` and `GET /info` (docs/config-server.md, "Endpoints"). */
export function createMetaRouter(options: MetaRouterDeps): Router {
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

  router.get('/info', (_req, res) => {
    res.json({
      name: SERVICE_NAME,
      version: API_VERSION,
      domain: options.domain,
      port: options.port,
      protocol: 'HTTPS',
      encryption: ENCRYPTION_TYPE,
      endpoints: {
        'GET /<env>/<file>':
          'encrypted configuration file: Base64(nonce || ciphertext || tag), ChaCha20-Poly1305; with X-Client-Public-Key and X-Client-Kem (X25519 or X-Wing), HPKE sealed to that registered key: Base64(enc || ciphertext || tag); X-Config-Version and ETag name the version; If-None-Match: 304; ?version=<v>: an earlier version; ?wait=<s> with If-None-Match: answered when the version changes',
        'GET /health': 'service health',
        'GET /info': 'service information',
      },
    });
  });

  return router;
}
