import { Router } from 'express';
import type { Publisher } from '../publisher';
import type { Scanner } from '../scanner';

/** Dependencies of {@link healthRoutes}. */
export interface HealthRoutesOptions {
  version: string;
  network: string;
  scanner: Scanner;
  publisher: Publisher;
  /** Whether the scanner runs in this process (SCANNER_ENABLED). */
  scannerEnabled: boolean;
}

/**
 * `GET /health`: the health record (`status`, `timestamp`, `version`; docs/silent-payments.md,
 * "GET /health") plus the scanner's progress and the relay publisher's
 * state. `status` is `healthy`, or `degraded` while the scanner cannot reach the chain node;
 * the HTTP status stays 200 since the HTTP API itself works.
 */
export function healthRoutes(options: HealthRoutesOptions): Router {
  const router = Router();
  router.get('/health', function health(_req, res) {
    const scanner = options.scanner.status();
    const degraded = options.scannerEnabled && scanner.state === 'retrying';
    res.json({
      status: degraded ? 'degraded' : 'healthy',
      timestamp: new Date().toISOString(),
      version: options.version,
      network: options.network,
      scanner: { enabled: options.scannerEnabled, ...scanner },
      relay: options.publisher.state(),
    });
  });
  return router;
}
