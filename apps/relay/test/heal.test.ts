import type { Envelope } from '@repo/relay-protocol';
import {
  PUBLISH_TOKEN,
  WALLET,
  blockEvent,
  connect,
  createRecordingLogger,
  getJson,
  postJson,
  relaysAndClients,
  removeTempDirs,
  startRelay,
  transactionEvent,
  waitFor,
  type TestClient,
  type TestRelay,
} from './support/helpers';
import { startTcpForwarder, type TcpForwarder } from '@repo/http/testing';

const linked = async (relay: TestRelay): Promise<string[]> =>
  ((await getJson(`${relay.httpUrl}/relays`)).body.relays as { relay_id: string; status: string }[])
    .filter((r) => r.status === 'connected')
    .map((r) => r.relay_id)
    .sort();

describe('the mesh heals', () => {
  const relays: TestRelay[] = [];
  const clients: TestClient[] = [];
  const forwarders: TcpForwarder[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(relays.splice(0).map((r) => r.close()));
    await Promise.all(forwarders.splice(0).map((f) => f.close()));
    removeTempDirs();
  });
  const start = async (id: string, env: Record<string, string> = {}, logger?: ReturnType<typeof createRecordingLogger>['logger']) => {
    const r = await startRelay({ RELAY_ID: id, ...env }, logger);
    relays.push(r);
    return r;
  };
  const open = async (relay: TestRelay, options: object = WALLET) => {
    const c = await connect(relay.wsUrl, options);
    clients.push(c);
    return c;
  };
  const forwarderTo = async (relay: TestRelay) => {
    const f = await startTcpForwarder({ port: relay.wsPort });
    forwarders.push(f);
    return f;
  };

  /**
   * Publishes on each of `publishers` in turn, one event every few ms, until `stop` resolves;
   * returns every event published, once all are acknowledged.
   */
  async function publishUntil(publishers: TestClient[], stop: Promise<void>): Promise<Envelope[]> {
    const sent: Envelope[] = [];
    let done = false;
    void stop.then(() => (done = true));
    let i = 0;
    while (!done) {
      const event = i % 3 === 0 ? blockEvent() : transactionEvent();
      publishers[i % publishers.length]!.send(event);
      sent.push(event);
      i++;
      await new Promise((r) => setTimeout(r, 3));
    }
    const acked = (id: string) => publishers.some((p) => p.received.some((m) => m.type === 'ack' && m.id === id));
    await waitFor(() => sent.every((e) => acked(e.id)), 10_000, 'every event acknowledged');
    return sent;
  }

  /** Every client received every event exactly once. */
  async function expectExactlyOnce(subscribers: TestClient[], events: Envelope[]): Promise<void> {
    const ids = events.map((e) => e.id);
    for (const c of subscribers) {
      await waitFor(() => ids.every((id) => c.received.some((m) => m.id === id)), 15_000, `every event at a client`);
    }
    // A last round trip on each: a late duplicate would be in by now.
    for (const c of subscribers) await c.request('ping');
    for (const c of subscribers) {
      const counts = new Map<string, number>();
      for (const m of c.received) if (ids.includes(m.id)) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(ids.length);
    }
  }

  async function cutAndRestore(forwarder: TcpForwarder, a: TestRelay, b: TestRelay, publishers: TestClient[]): Promise<Envelope[]> {
    let finish!: () => void;
    const stop = new Promise<void>((resolve) => (finish = resolve));
    const publishing = publishUntil(publishers, stop);
    await new Promise((r) => setTimeout(r, 100));
    forwarder.cut();
    await waitFor(async () => !(await linked(a)).includes(b.relayId), 5_000, 'link cut');
    await new Promise((r) => setTimeout(r, 300));
    forwarder.restore();
    await waitFor(async () => (await linked(a)).includes(b.relayId) && (await linked(b)).includes(a.relayId), 10_000, 'link restored');
    await new Promise((r) => setTimeout(r, 100));
    finish();
    return publishing;
  }

  it('three relays in a line: after a cut link comes back, every client of every relay gets every event once', async () => {
    const a = await start('relay-a');
    const c = await start('relay-c');
    const toC = await forwarderTo(c);
    // a <- b -> (forwarder) -> c
    const b = await start('relay-b', { RELAY_PEERS: `${a.wsUrl},ws://127.0.0.1:${toC.port}` });
    await waitFor(async () => (await linked(b)).length === 2, 5_000, 'line up');
    const subscribers = await Promise.all([a, a, b, b, c, c].map((r) => open(r)));
    const publishers = await Promise.all([a, c, b].map((r) => open(r, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } })));

    const events = await cutAndRestore(toC, b, c, publishers);
    expect(events.length).toBeGreaterThan(50);
    await expectExactlyOnce(subscribers, events);
    // What c stored while apart reached a only through the heal.
    expect(b.app.relay.counters.events_healed + c.app.relay.counters.events_healed).toBeGreaterThan(0);
  });

  it('three relays in a triangle: a cut link and its heal deliver every event once, the copies dropped', async () => {
    const a = await start('relay-a');
    const b = await start('relay-b', { RELAY_PEERS: a.wsUrl });
    const c = await start('relay-c', { RELAY_PEERS: b.wsUrl });
    const toC = await forwarderTo(c);
    a.app.relay.addPeer(`ws://127.0.0.1:${toC.port}`);
    await waitFor(async () => (await linked(a)).length === 2 && (await linked(c)).length === 2, 5_000, 'triangle up');
    const subscribers = await Promise.all([a, a, b, b, c, c].map((r) => open(r)));
    const publishers = await Promise.all([a, c, b].map((r) => open(r, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } })));

    const events = await cutAndRestore(toC, a, c, publishers);
    await expectExactlyOnce(subscribers, events);
    const dropped = relays.reduce((n, r) => n + r.app.relay.counters.duplicates_dropped, 0);
    expect(dropped).toBeGreaterThan(0);
  });

  it('heals a relay restarted on its DATA_DIR: what its peer stored meanwhile reaches its clients', async () => {
    const a = await start('relay-a');
    const b = await start('relay-b', { RELAY_PEERS: a.wsUrl });
    await waitFor(async () => (await linked(a)).includes('relay-b'), 5_000, 'linked');
    const pubA = await open(a, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    await b.close();
    relays.splice(relays.indexOf(b), 1);
    const meanwhile = [blockEvent(), blockEvent(), blockEvent()];
    for (const e of meanwhile) pubA.send(e);
    await pubA.next((m) => m.type === 'ack' && m.id === meanwhile[2]!.id);
    const b2 = await start('relay-b', { RELAY_PEERS: a.wsUrl, DATA_DIR: b.dataDir, WS_PORT: String(b.wsPort) });
    const client = await open(b2);
    await client.request('subscribe', { since: 0 });
    for (const e of meanwhile) await client.next((m) => m.id === e.id);
  });
});

describe('mesh diagnostics', () => {
  const { relays, clients } = relaysAndClients();

  it('logs a refused handshake with the HTTP status and what to do, and lists the peer as disconnected with the error', async () => {
    const b = await startRelay({ RELAY_ID: 'relay-b', RELAY_MESH_TOKEN: 'another-mesh-token-0123456789' });
    relays.push(b);
    const { logger, lines } = createRecordingLogger();
    const a = await startRelay({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl }, logger);
    relays.push(a);
    await waitFor(() => lines.some((l) => l.includes('cannot reach peer relay')), 5_000, 'refusal logged');
    const line = lines.find((l) => l.includes('cannot reach peer relay'))!;
    expect(line).toContain('peer answered HTTP 401');
    expect(line).toContain('peer refused our mesh token: relays of one mesh share RELAY_MESH_TOKEN');
    const { body } = await getJson(`${a.httpUrl}/relays`);
    expect(body.relays).toEqual([
      expect.objectContaining({
        relay_id: null,
        status: 'disconnected',
        url: b.wsUrl,
        address: `127.0.0.1:${b.wsPort}`,
        last_error: expect.stringContaining('HTTP 401: peer refused our mesh token'),
      }),
    ]);
    expect((await getJson(`${a.httpUrl}/metrics`)).body.mesh_health).toBe(0);
  });

  it('lists a peer that went away as disconnected under its relay id', async () => {
    const b = await startRelay({ RELAY_ID: 'relay-b' });
    const a = await startRelay({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl });
    relays.push(a);
    await waitFor(async () => (await linked(a)).includes('relay-b'), 5_000, 'linked');
    await b.close();
    await waitFor(async () => (await linked(a)).length === 0, 5_000, 'gone');
    const entry = (await getJson(`${a.httpUrl}/relays`)).body.relays[0];
    expect(entry).toMatchObject({ relay_id: 'relay-b', status: 'disconnected', last_error: expect.any(String) });
  });

  it('POST /sync: what the target reports reaches the requesting relay clients as the sync message', async () => {
    const b = await startRelay({ RELAY_ID: 'relay-b' });
    const a = await startRelay({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl });
    relays.push(a, b);
    await waitFor(async () => (await linked(a)).includes('relay-b'), 5_000, 'linked');
    const client = await connect(a.wsUrl);
    clients.push(client);
    const res = await postJson(`${a.httpUrl}/sync`, { sync_type: 'all', target_relay: 'relay-b' });
    expect(res.status).toBe(200);
    for (const type of ['StateSync', 'HealthSync', 'MetricsSync']) {
      const m = await client.next((x) => x.type === type && x.data.relay_id === 'relay-b');
      expect(m.data.relay_id).toBe('relay-b');
    }
    const state = client.received.find((m) => m.type === 'StateSync' && m.data.relay_id === 'relay-b')!;
    expect(state.data).toMatchObject({ state: 'running', version: expect.any(String) });
  });
});
