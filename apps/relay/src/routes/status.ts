import { Router, type RequestHandler } from 'express';
import type { Relay } from '../relay';

/** What {@link createStatusRouter} reads. */
export interface StatusRouterDeps {
  relay: Relay;
  /** Answers `/metrics` instead of the plain record when given (the record, or Prometheus text on request). */
  metrics?: RequestHandler;
}

/** `GET /status` (status record with `sync_metrics`) and `GET /metrics` (metrics record), docs/relay.md, "HTTP records". */
export function createStatusRouter({ relay, metrics }: StatusRouterDeps): Router {
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
