import { Router } from 'express';
import type { Publisher } from '../publisher';
import type { Scanner, ScannerFailure, ScannerStatus } from '../scanner';

/**
 * Why the service is not ready, or undefined: `starting` (no answer from the node yet),
 * `node-unreachable` (the node, or the proxy in front of it, cannot be reached), `credentials-refused`
 * (HTTP 401/403), `node-unavailable` (the rpc-proxy answered -32603: it cannot get an answer
 * from the node behind it, or cannot read the node's cookie), `node-error` (anything else the
 * node answered instead of a result). A node in its initial block download is reachable and
 * authenticated: the service is ready (its HTTP API works) and the scanner waits, which `/ready`
 * and `/health` say; a health check that failed until a fresh signet node had synced would keep
 * the whole stack down for hours.
 */
export function unreadyReason(
  scanner: ScannerStatus,
  failure: ScannerFailure | undefined,
): { reason: string; message: string } | undefined {
  if (scanner.state === 'retrying' && failure !== undefined) {
    const message = scanner.last_error ?? 'the chain node failed';
    if (failure.kind === 'unreachable') return { reason: 'node-unreachable', message };
    if (failure.kind === 'http' && (failure.status === 401 || failure.status === 403)) return { reason: 'credentials-refused', message };
    if (failure.kind === 'rpc' && failure.rpcCode === -32603) return { reason: 'node-unavailable', message };
    return { reason: 'node-error', message };
  }
  if (scanner.state === 'idle' || scanner.state === 'starting') return { reason: 'starting', message: 'no answer from the chain node yet' };
  return undefined;
}

/** Dependencies of {@link createHealthRouter}. */
export interface HealthRouterDeps {
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
export function createHealthRouter(options: HealthRouterDeps): Router {
  const router = Router();
  /**
   * `GET /ready` (docs/silent-payments.md, "Health and readiness"): 200 when the scanner's last
   * attempt reached the node and was let in (or when SCANNER_ENABLED=false: the HTTP API needs
   * no node), saying so while the node is still in its initial block download; 503 with the
   * reason otherwise, judged from the scanner's last poll (every SCAN_POLL_INTERVAL_MS, sooner
   * while retrying).
   */
  router.get('/ready', function ready(_req, res) {
    res.setHeader('Cache-Control', 'no-store');
    if (!options.scannerEnabled) {
      res.json({ status: 'ready', scanner: { enabled: false } });
      return;
    }
    const scanner = options.scanner.status();
    const unready = unreadyReason(scanner, options.scanner.lastFailure());
    if (unready === undefined) {
      const syncing = scanner.node?.initialblockdownload === true;
      res.json({
        status: 'ready',
        scanner: { state: scanner.state, scanned_height: scanner.scanned_height, tip_height: scanner.tip_height },
        ...(syncing && {
          message: `the node is in its initial block download (${scanner.node!.blocks} of ${scanner.node!.headers} blocks, verification progress ${scanner.node!.verificationprogress}): ${scanner.state === 'initial_block_download' ? 'the scanner waits' : 'the scanner follows the blocks it has'}`,
          node: scanner.node,
        }),
      });
      return;
    }
    res.status(503).json({ status: 'unready', ...unready, node: scanner.node });
  });
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
