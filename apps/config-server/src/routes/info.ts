import { Router } from 'express';
import { API_VERSION, ENCRYPTION_TYPE, SERVICE_NAME } from '../constants';

/** What {@link createInfoRouter} needs. */
export interface InfoRouterDeps {
  domain: string;
  port: number;
}

/** `GET /info` (docs/config-server.md, "Endpoints"). */
export function createInfoRouter(options: InfoRouterDeps): Router {
  const router = Router();

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
