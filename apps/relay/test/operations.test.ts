import { sampleValue, scrape } from '@repo/metrics/testing';
import {
  blockEvent,
  connect,
  getJson,
  PUBLISH_TOKEN,
  removeTempDirs,
  startRelay,
  WALLET,
  type TestClient,
  type TestRelay,
} from './support/helpers';

// Operations (docs/README.md, "Operations"): Prometheus text beside the JSON record, readiness,
// request ids and trusted proxies, over real sockets.
describe('relay operations', () => {
  let relay: TestRelay;
  const clients: TestClient[] = [];
  beforeAll(async () => {
    relay = await startRelay({ RELAY_ID: 'relay-ops-test' });
  });
  afterAll(async () => {
    for (const c of clients) c.ws.close();
    await relay.close();
    removeTempDirs();
  });

  it('GET /metrics stays the JSON record unless Accept asks for Prometheus text', async () => {
    const json = await getJson(`${relay.httpUrl}/metrics`);
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ connected_clients: expect.any(Number), events_published: expect.any(Number) });
    const browser = await getJson(`${relay.httpUrl}/metrics`, { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.headers.get('content-type')).toMatch(/^application\/json/);
    const open = await fetch(`${relay.httpUrl}/metrics`, { headers: { Accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(open.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('Prometheus text: clients, events in and out, replay backlog move with use', async () => {
    const url = `${relay.httpUrl}/metrics`;
    const accept = { headers: { Accept: 'text/plain;version=0.0.4' } };
    const before = await scrape(url, accept);
    const subscriber = await connect(relay.wsUrl, WALLET);
    const publisher = await connect(relay.wsUrl, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    clients.push(subscriber, publisher);
    await subscriber.request('subscribe', { types: ['BlockScanned'] });
    const events = [blockEvent(), blockEvent()];
    for (const e of events) publisher.send(e);
    for (const e of events) await subscriber.next((m) => m.id === e.id);
    await publisher.next((m) => m.type === 'ack' && m.id === events[1]!.id);

    const after = await scrape(url, accept);
    const grew = (name: string) => sampleValue(after, name)! - sampleValue(before, name)!;
    expect(sampleValue(after, 'relay_clients')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(after, 'relay_peers')).toBe(0);
    expect(grew('relay_events_published_total')).toBe(2);
    expect(grew('relay_events_stored_total')).toBe(2);
    expect(grew('relay_replay_backlog_events')).toBe(2);
    expect(grew('relay_messages_received_total')).toBeGreaterThanOrEqual(3);
    expect(grew('relay_messages_sent_total')).toBeGreaterThanOrEqual(4);
    expect(sampleValue(after, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(3);
  });

  it('GET /ready: 200 while the event log takes writes, 503 event-log-unwritable when it does not', async () => {
    expect((await getJson(`${relay.httpUrl}/ready`)).body).toEqual({ status: 'ready' });
    const other = await startRelay({ RELAY_ID: 'relay-ops-unready' });
    try {
      // The log's file closed under it: its next write fails.
      await other.app.relay.close();
      const res = await getJson(`${other.httpUrl}/ready`);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'unready', reason: 'event-log-unwritable' });
    } finally {
      await other.close();
    }
  });

  it('echoes a request id; behind TRUST_PROXY takes the proxy one', async () => {
    const res = await fetch(`${relay.httpUrl}/health`, { headers: { 'X-Request-Id': 'from-a-client' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const proxied = await startRelay({ RELAY_ID: 'relay-ops-proxied', TRUST_PROXY: 'loopback' });
    try {
      const behind = await fetch(`${proxied.httpUrl}/health`, {
        headers: { 'X-Request-Id': 'nginx-3', 'X-Forwarded-For': '198.51.100.4' },
      });
      expect(behind.headers.get('x-request-id')).toBe('nginx-3');
    } finally {
      await proxied.close();
    }
  });
});
