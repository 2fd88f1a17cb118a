import { Router, type RequestHandler } from 'express';
import { withDeadline } from '@repo/service';
import type { EventLog } from '../event-log';
import type { Relay } from '../relay';

/** What {@link createHealthRouter} reads. */
export interface HealthRouterDeps {
  relay: Relay;
  eventLog: EventLog;
}

/** `GET /health` (docs/relay.md, "HTTP records": the health record) and `GET /ready`. */
export function createHealthRouter({ relay, eventLog }: HealthRouterDeps): Router {
  const router = Router();
  router.get('/health', function health(_req, res) {
    res.json(relay.health());
  });
  router.get('/ready', readyHandler(eventLog));
  return router;
}

/**
 * `GET /ready` (docs/README.md, "Operations"): 200 `{status: "ready"}` while the event log takes a
 * write, 503 `{status: "unready", reason: "event-log-unwritable", message}` otherwise. The relay's
 * peers are no reason: a relay alone still serves its clients.
 */
export function readyHandler(eventLog: EventLog, timeoutMs = 2_000): RequestHandler {
  return async function ready(_req, res) {
    res.setHeader('Cache-Control', 'no-store');
    try {
      await withDeadline(eventLog.setMeta('ready_probe', String(Date.now())), timeoutMs, `no answer within ${timeoutMs} ms`);
      res.json({ status: 'ready' });
    } catch (err) {
      res
        .status(503)
        .json({ status: 'unready', reason: 'event-log-unwritable', message: `the event log takes no write: ${(err as Error).message}` });
    }
  };
}
