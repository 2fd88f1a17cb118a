import { Router } from 'express';
import type { Relay } from '../relay';

/** What {@link createHealthRouter} reads. */
export interface HealthRouterDeps {
  relay: Relay;
}

/** `GET /health` (docs/relay.md, "HTTP records": the health record). */
export function createHealthRouter({ relay }: HealthRouterDeps): Router {
  const router = Router();
  router.get('/health', function health(_req, res) {
    res.json(relay.health());
  });
  return router;
}
