import { Router, type RequestHandler } from 'express';
import type { Relay } from '../relay';

/**
 * `GET /status` (status record with `sync_metrics`) and `GET /metrics` (metrics record), docs/relay.md, "HTTP records";
 * `metrics` answers `/metrics` instead when given (the record, or Prometheus text on request).
 */
export function statusRouter(relay: Relay, metrics?: RequestHandler): Router {
  const router = Router();
  router.get('/status', function status(_req, res) {
    res.json(relay.status());
  });
  router.get(
    '/metrics',
    metrics ??
      function metricsRecord(_req, res) {
        res.json(relay.metrics());
      },
  );
  return router;
}
