import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestHandler } from 'express';
import { AppError } from '@repo/errors';

/** Options of {@link maintenanceSwitch}. */
export interface MaintenanceOptions {
  /** On from the start (`MAINTENANCE_MODE=true`). */
  enabled: boolean;
  /** The operator's switch: while `<dataDir>/MAINTENANCE` exists, the service is in maintenance. */
  dataDir: string;
  now?: () => number;
}

/**
 * Answers 503 `SERVICE_UNAVAILABLE` ("service temporarily unavailable", docs/config-server.md, "Maintenance") on every
 * endpoint while in maintenance. The flag file is looked at most once a second, so toggling it
 * needs no restart and costs nothing per request.
 */
export function maintenanceSwitch(options: MaintenanceOptions): RequestHandler {
  const flag = join(options.dataDir, 'MAINTENANCE');
  const now = options.now ?? Date.now;
  let checkedAt = -Infinity;
  let flagged = false;
  return function maintenanceSwitch(_req, _res, next) {
    const t = now();
    if (t - checkedAt >= 1_000) {
      checkedAt = t;
      flagged = existsSync(flag);
    }
    if (options.enabled || flagged) {
      next(new AppError('SERVICE_UNAVAILABLE', { details: 'maintenance', headers: { 'Retry-After': '60' } }));
      return;
    }
    next();
  };
}
