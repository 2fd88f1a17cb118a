import { Router } from 'express';
import type { Relay } from '../relay';

/** `GET /health` (docs/relay.md, "HTTP records": the health record). */
export function healthRouter(relay: Relay): Router {
  const router = Router();
  router.get('/health', function health(_req, res) {
    res.json(relay.health());
  });
  return router;
}
