import type { RequestHandler } from 'express';
import { createMetrics, type ServiceMetrics } from '@repo/metrics';
import type { EventLog } from './event-log';
import type { Relay } from './relay';

/** The relay's Prometheus metrics (README, "Operations"), read from its JSON metrics record at each scrape. */
export interface RelayMetrics {
  metrics: ServiceMetrics;
  /**
   * `GET /metrics`: the JSON metrics record (docs/relay.md, "HTTP records"), or Prometheus text
   * when `Accept` asks for `text/plain` or `application/openmetrics-text` (what Prometheus sends).
   */
  handler: RequestHandler;
}

/** Counters of the JSON record and their Prometheus names. */
const COUNTERS: readonly [field: string, name: string, help: string][] = [
  ['messages_received', 'relay_messages_received_total', 'Messages received from clients, publishers and peers (events in).'],
  ['messages_rejected', 'relay_messages_rejected_total', 'Messages refused before parsing (client size or rate, nesting).'],
  ['messages_sent', 'relay_messages_sent_total', 'Messages sent to clients and peers (events out).'],
  ['events_published', 'relay_events_published_total', 'Events accepted from the publisher.'],
  ['events_stored', 'relay_events_stored_total', 'Events written to the event log (published here or forwarded by a peer).'],
  ['events_replayed', 'relay_events_replayed_total', 'Events sent to clients from the log (subscribe with since).'],
  ['events_healed', 'relay_events_healed_total', 'Events sent to peers from the log after a link came back.'],
  ['duplicates_dropped', 'relay_duplicates_dropped_total', 'Events dropped as already seen.'],
  ['slow_consumers_dropped', 'relay_slow_consumers_dropped_total', 'Connections closed for not reading fast enough.'],
  ['upgrades_refused', 'relay_upgrades_refused_total', 'WebSocket upgrades refused (authentication, limits).'],
  ['peer_connect_failures', 'relay_peer_connect_failures_total', 'Failed attempts to reach a configured peer.'],
  ['sync_errors', 'relay_sync_errors_total', 'Sync messages that failed.'],
];

/** Whether `Accept` asks for a Prometheus exposition format rather than the JSON record. */
export function wantsPrometheus(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*(text\/plain|application\/openmetrics-text)\b/i.test(accept);
}

/**
 * Gauges `relay_clients`, `relay_peers`, `relay_mesh_health` (share of configured peers linked),
 * `relay_replay_backlog_events` (events kept in the log, what a replay can reach), and the counters
 * of {@link COUNTERS}, plus the HTTP API's request count and duration by route.
 */
export function createRelayMetrics(relay: Relay, eventLog: EventLog): RelayMetrics {
  const metrics = createMetrics({ service: 'relay' });
  // One read of the record per scrape, shared by every series.
  const record = metrics.perScrape(() => relay.metrics());
  const field = (name: string): number => {
    const value = record()[name];
    return typeof value === 'number' ? value : 0;
  };
  const gauge = (name: string, help: string, from: string) =>
    metrics.gauge({
      name,
      help,
      collect() {
        this.set(field(from));
      },
    });
  gauge('relay_clients', 'WebSocket clients connected.', 'connected_clients');
  gauge('relay_peers', 'Relays linked (inbound and outbound).', 'connected_relays');
  gauge('relay_mesh_health', 'Share of the configured peers linked now (1 with none configured).', 'mesh_health');
  for (const [from, name, help] of COUNTERS) {
    metrics.readCounter(name, help, () => field(from));
  }
  metrics.gauge({
    name: 'relay_replay_backlog_events',
    help: 'Events kept in the event log: what a subscribe with since can replay.',
    async collect() {
      this.set(await eventLog.count());
    },
  });

  const prometheus = metrics.handler();
  return {
    metrics,
    handler(req, res, next) {
      if (wantsPrometheus(req.headers.accept)) {
        prometheus(req, res, next);
        return;
      }
      res.vary('Accept');
      res.json(relay.metrics());
    },
  };
}
