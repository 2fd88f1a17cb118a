import { Router } from 'express';
import type { Relay } from '../relay';

/** `GET /status` (status record with `sync_metrics`) and `GET /metrics` (metrics record), docs/relay.md, "HTTP". */
export function statusRouter(relay: Relay): Router {
  const router = Router();
  router.get('/status', function status(_req, res) {
    res.json(relay.status());
  });
  router.get('/metrics', function metrics(_req, res) {
    res.json(relay.metrics());
  });
  return router;
}
