import { createMetrics, type ServiceMetrics } from '@repo/metrics';
import type { Publisher } from './publisher';
import type { Scanner, ScannerState } from './scanner';

/** Every scanner state (a Record, so a state added to the scanner must be added here). */
const STATES = Object.keys({
  idle: 1,
  starting: 1,
  initial_block_download: 1,
  waiting: 1,
  syncing: 1,
  synced: 1,
  retrying: 1,
  stopped: 1,
} satisfies Record<ScannerState, 1>) as ScannerState[];

/** The service's metrics (README, "Operations") and the publisher wrapped to feed them. */
export interface SilentPaymentsMetrics {
  metrics: ServiceMetrics;
  /** `publisher`, counting each block scanned and each payment found as the scanner publishes them. */
  publisher: Publisher;
  /** Reads the scanner's status at each scrape (call once the scanner exists). */
  observeScanner(scanner: Scanner): void;
}

/**
 * `silent_payments_blocks_scanned_total` (its `rate()` is the scan rate), `silent_payments_found_total`
 * (outputs paying the service found in scanned blocks), `silent_payments_scanned_height`,
 * `silent_payments_tip_height`, `silent_payments_lag_blocks` (the node's tip minus the last block
 * scanned), `silent_payments_scan_rate_blocks_per_second` (over the last 30 s),
 * `silent_payments_scanner_failures` (consecutive), `silent_payments_scanner_state{state}` (1 for the
 * current state), and the relay publisher's `silent_payments_events_queued` /
 * `silent_payments_events_dropped_total` / `silent_payments_events_acknowledged_total`.
 */
export function createSilentPaymentsMetrics(publisher: Publisher): SilentPaymentsMetrics {
  const metrics = createMetrics({ service: 'silent-payments' });
  const blocks = metrics.counter({ name: 'silent_payments_blocks_scanned_total', help: 'Blocks scanned.' });
  const found = metrics.counter({ name: 'silent_payments_found_total', help: 'Silent-payment outputs found in scanned blocks.' });
  const fromPublisher = metrics.readCounter;
  metrics.gauge({
    name: 'silent_payments_events_queued',
    help: 'Events waiting for the relay to acknowledge them.',
    collect() {
      this.set(publisher.state().queued);
    },
  });
  fromPublisher(
    'silent_payments_events_dropped_total',
    'Events dropped because the publish queue was full.',
    () => publisher.state().dropped,
  );
  fromPublisher('silent_payments_events_acknowledged_total', 'Events the relay acknowledged.', () => publisher.state().acknowledged);

  const wrapped: Publisher = {
    publish(type, data) {
      if (type === 'BlockScanned') {
        blocks.inc();
        found.inc((data as { silent_payments_found: number }).silent_payments_found);
      }
      return publisher.publish(type, data);
    },
    state: () => publisher.state(),
    start: () => publisher.start(),
    close: () => publisher.close(),
  };

  return {
    metrics,
    publisher: wrapped,
    observeScanner(scanner) {
      // One status read per scrape, shared by the gauges below.
      const current = metrics.perScrape(() => scanner.status());
      const gauge = (name: string, help: string, read: () => number | null) =>
        metrics.gauge({
          name,
          help,
          collect() {
            const value = read();
            if (value === null) this.reset();
            else this.set(value);
          },
        });
      gauge('silent_payments_scanned_height', 'Height of the last block scanned.', () => current().scanned_height);
      gauge('silent_payments_tip_height', "The node's tip as last seen.", () => current().tip_height);
      gauge('silent_payments_lag_blocks', "Blocks between the node's tip and the last block scanned.", () => {
        const { tip_height: tip, scanned_height: scanned } = current();
        return tip === null || scanned === null ? null : Math.max(0, tip - scanned);
      });
      gauge(
        'silent_payments_scan_rate_blocks_per_second',
        'Blocks scanned per second over the last 30 s.',
        () => current().blocks_per_second,
      );
      gauge('silent_payments_scanner_failures', 'Consecutive failed attempts to reach the node.', () => current().failures);
      metrics.gauge({
        name: 'silent_payments_scanner_state',
        help: 'The scanner state: 1 for the current one.',
        labelNames: ['state'] as const,
        collect() {
          const state = current().state;
          for (const s of STATES) this.set({ state: s }, s === state ? 1 : 0);
        },
      });
    },
  };
}
