import { Router } from 'express';
import { blindbitInfo } from '../tweak-index/blindbit';
import type { TweakIndexStore } from '../tweak-index/store';

/** BlindBit's `GET /info` (network, indexed height, feature flags) for light wallets (docs/silent-payments.md, "BlindBit OracleService"). */
export function createIndexInfoRouter(deps: { store: TweakIndexStore; network: string }): Router {
  const router = Router();
  router.get('/info', (_req, res, next) => {
    blindbitInfo(deps.store, deps.network).then((info) => res.json(info), next);
  });
  return router;
}
