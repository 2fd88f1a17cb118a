import { Router } from 'express';
import { AppError } from '@repo/errors';
import { SYNC_REQUEST_TYPES, type SyncRequestType } from '@repo/relay-protocol';
import type { Relay } from '../relay';

/** What {@link createRelaysRouter} reads. */
export interface RelaysRouterDeps {
  relay: Relay;
}

/** `GET /relays` (the peers) and `POST /sync` (ask a peer, or all, for a sync), docs/relay.md, "HTTP endpoints". */
export function createRelaysRouter({ relay }: RelaysRouterDeps): Router {
  const router = Router();
  router.get('/relays', function relays(_req, res) {
    res.json({ relays: relay.relays() });
  });
  router.post('/sync', async function sync(req, res) {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AppError('INVALID_REQUEST', {
        message: 'expected a JSON object body',
        details: 'send {"sync_type": "...", "target_relay": "..."} with Content-Type: application/json',
      });
    }
    const { sync_type: syncType, target_relay: target } = body as Record<string, unknown>;
    if (syncType === undefined)
      throw new AppError('INVALID_REQUEST', {
        message: 'missing required parameter: sync_type',
        details: `one of ${SYNC_REQUEST_TYPES.join(', ')}`,
      });
    if (typeof syncType !== 'string' || !(SYNC_REQUEST_TYPES as readonly string[]).includes(syncType)) {
      throw new AppError('INVALID_REQUEST', {
        message: 'unknown sync_type',
        details: `sync_type must be one of ${SYNC_REQUEST_TYPES.join(', ')}`,
      });
    }
    if (target === undefined)
      throw new AppError('INVALID_REQUEST', {
        message: 'missing required parameter: target_relay',
        details: 'a peer relay_id (see GET /relays), this relay\'s id, or "all"',
      });
    if (typeof target !== 'string' || target === '' || target.length > 64) {
      throw new AppError('INVALID_REQUEST', {
        message: 'invalid parameter: target_relay',
        details: 'target_relay must be a relay_id string or "all"',
      });
    }
    res.json(await relay.requestSync(syncType as SyncRequestType, target));
  });
  return router;
}
