import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { generateSelfSignedCertificate, certificateFingerprint } from '@repo/service';
import {
  MESH_TOKEN,
  PUBLISH_TOKEN,
  type TestClient,
  WALLET,
  connect,
  getJson,
  postJson,
  removeTempDirs,
  startRelay,
  tempDir,
  transactionEvent,
  waitFor,
  type TestRelay,
} from './support/helpers';

const connectedRelays = async (relay: TestRelay): Promise<string[]> =>
  ((await getJson(`${relay.httpUrl}/relays`)).body.relays as { relay_id: string; status: string }[])
    .filter((r) => r.status === 'connected')
    .map((r) => r.relay_id)
    .sort();

/** The relays and clients of a describe block, closed after each of its tests. */
function meshFixture() {
  const relays: TestRelay[] = [];
  const clients: TestClient[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const r = await startRelay(env);
    relays.push(r);
    return r;
  };
  const open = async (relay: TestRelay, headers: Record<string, string> = WALLET.headers) => {
    const c = await connect(relay.wsUrl, { headers });
    clients.push(c);
    return c;
  };

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(relays.splice(0).map((r) => r.close()));
    removeTempDirs();
  });
  return { relays, clients, start, open };
}

describe('relay mesh', () => {
  const { relays, start, open } = meshFixture();

  it('delivers each event to every client of three relays exactly once, in a mesh with a cycle', async () => {
    const a = await start({ RELAY_ID: 'relay-a' });
    const b = await start({ RELAY_ID: 'relay-b' });
    const c = await start({ RELAY_ID: 'relay-c' });
    // A -> B -> C -> A: every relay has two peers and every event can go round the cycle.
    a.app.relay.addPeer(b.wsUrl);
    b.app.relay.addPeer(c.wsUrl);
    c.app.relay.addPeer(a.wsUrl);
    await waitFor(
      async () =>
        (await connectedRelays(a)).length === 2 && (await connectedRelays(b)).length === 2 && (await connectedRelays(c)).length === 2,
      5_000,
      'mesh up',
    );
    expect(await connectedRelays(a)).toEqual(['relay-b', 'relay-c']);

    const subscribers = await Promise.all([a, a, b, b, c, c].map((r) => open(r)));
    const publishers = await Promise.all([a, b, c].map((r) => open(r, { Authorization: `Bearer ${PUBLISH_TOKEN}` })));
    const events = [transactionEvent(), transactionEvent(), transactionEvent()];
    events.forEach((event, i) => publishers[i]!.send(event));

    for (const client of subscribers) for (const event of events) await client.next((m) => m.id === event.id);
    // In a triangle each event is forwarded 4 times (2 by its origin, 1 by each other relay) and
    // reaches each relay for the first time twice: exactly 2 copies per event are dropped. Once
    // that count is reached no copy is still travelling, so the counts below are final.
    const dropped = () => relays.reduce((n, r) => n + r.app.relay.counters.duplicates_dropped, 0);
    await waitFor(() => dropped() === 2 * events.length, 5_000, 'all copies settled');
    for (const client of subscribers) {
      for (const event of events) expect(client.received.filter((m) => m.id === event.id)).toEqual([event]);
    }
    // Publishers are clients too: they get the events of the others once, and their own once.
    for (const p of publishers) for (const event of events) await p.next((m) => m.id === event.id && m.type === 'TransactionReceived');
    await Promise.all(publishers.map((p) => p.request('ping')));
    for (const p of publishers)
      for (const event of events) expect(p.received.filter((m) => m.id === event.id && m.type === 'TransactionReceived')).toHaveLength(1);
  });

  it('never sends an event back over the link it came from', async () => {
    const a = await start({ RELAY_ID: 'relay-a' });
    const b = await start({ RELAY_ID: 'relay-b' });
    // Both dial each other: two links between the same pair.
    a.app.relay.addPeer(b.wsUrl);
    b.app.relay.addPeer(a.wsUrl);
    await waitFor(async () => (await connectedRelays(a)).length === 1 && (await connectedRelays(b)).length === 1);
    const client = await open(b);
    const pub = await open(a, { Authorization: `Bearer ${PUBLISH_TOKEN}` });
    const event = transactionEvent();
    pub.send(event);
    await client.next((m) => m.id === event.id);
    // A marker published after it travels the same link; once it arrived, so would have an echo.
    const marker = transactionEvent();
    pub.send(marker);
    await client.next((m) => m.id === marker.id);
    const pong = await pub.request('ping');
    expect(pong.type).toBe('pong');
    expect(a.app.relay.counters.duplicates_dropped).toBe(0);
    expect(b.app.relay.counters.duplicates_dropped).toBe(0);
    expect(client.received.filter((m) => m.id === event.id)).toHaveLength(1);
  });

  it('reconnects to a peer that is killed and restarted, lists it again and tells clients while it is gone', async () => {
    const bDir = tempDir();
    let b = await startRelay({ DATA_DIR: bDir });
    const bId = b.relayId;
    const bPort = b.wsPort;
    const a = await start({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl });
    const client = await open(a);
    await waitFor(async () => (await connectedRelays(a)).includes(bId), 5_000, 'first link');
    const entry = (await getJson(`${a.httpUrl}/relays`)).body.relays[0];
    expect(entry).toMatchObject({ relay_id: bId, address: `127.0.0.1:${bPort}`, status: 'connected', direction: 'outbound' });
    expect(Number.isInteger(entry.connected_since) && Number.isInteger(entry.last_heartbeat)).toBe(true);

    await b.close();
    const lost = await client.next((m) => m.type === 'error');
    expect(lost.data).toMatchObject({ code: 'CONNECTION_ERROR', message: `relay ${bId} is unreachable` });
    expect(await connectedRelays(a)).toEqual([]);
    expect((await getJson(`${a.httpUrl}/metrics`)).body.mesh_health).toBe(0);

    // Same DATA_DIR, same port: the generated relay_id is stable across the restart.
    b = await startRelay({ DATA_DIR: bDir, WS_PORT: String(bPort) });
    relays.push(b);
    expect(b.relayId).toBe(bId);
    await waitFor(async () => (await connectedRelays(a)).includes(bId), 5_000, 'link after restart');
    expect((await getJson(`${a.httpUrl}/metrics`)).body.mesh_health).toBe(1);
    const pub = await open(b, { Authorization: `Bearer ${PUBLISH_TOKEN}` });
    const event = transactionEvent();
    pub.send(event);
    expect(await client.next((m) => m.id === event.id)).toEqual(event);
  });

  it('terminates a peer that stops answering the heartbeat', async () => {
    const a = await start({ RELAY_ID: 'relay-a', HEARTBEAT_INTERVAL_MS: '100' });
    const client = await open(a);
    // A peer that says hello and then never answers a ping (a hung process, a dead route).
    const ghost = new WebSocket(a.wsUrl, { headers: { Authorization: `Bearer ${MESH_TOKEN}` }, autoPong: false });
    const ghostClosed = new Promise<number>((resolve) => ghost.on('close', (code) => resolve(code)));
    await new Promise((resolve) => ghost.once('open', resolve));
    ghost.send(JSON.stringify({ type: 'hello', id: 'hello-ghost', timestamp: Date.now(), data: { relay_id: 'ghost' } }));
    await waitFor(async () => (await connectedRelays(a)).includes('ghost'), 2_000, 'ghost listed');
    expect(await ghostClosed).toBe(1006);
    const lost = await client.next((m) => m.type === 'error' && m.data.code === 'CONNECTION_ERROR');
    expect(lost.data.message).toBe('relay ghost is unreachable');
    expect(await connectedRelays(a)).toEqual([]);
  });

  it('refuses hello from a connection without the mesh token', async () => {
    const a = await start();
    const client = await open(a);
    client.send({ type: 'hello', id: 'h1', timestamp: Date.now(), data: { relay_id: 'intruder' } });
    const err = await client.next((m) => m.type === 'error');
    expect(err.data).toMatchObject({ code: 'INVALID_MESSAGE', message: 'peering needs the mesh token' });
    expect(await connectedRelays(a)).toEqual([]);
  });
});

describe('relay mesh: POST /sync', () => {
  const { start, open } = meshFixture();

  it('asks a peer for a sync and records what it answers', async () => {
    const b = await start({ RELAY_ID: 'relay-b' });
    const a = await start({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl });
    await waitFor(async () => (await connectedRelays(a)).length === 1);
    const { status, body } = await postJson(`${a.httpUrl}/sync`, { sync_type: 'HealthSync', target_relay: 'relay-b' });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      message: expect.stringContaining('relay-b'),
      sync_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const entry = (await getJson(`${a.httpUrl}/relays`)).body.relays[0];
    expect(entry.last_sync.HealthSync).toMatchObject({
      relay_id: 'relay-b',
      status: 'healthy',
      cpu_usage: expect.any(Number),
      memory_usage: expect.any(Number),
    });
    expect(entry.last_sync.HealthSync.memory_usage).toBeGreaterThan(0);

    const all = await postJson(`${a.httpUrl}/sync`, { sync_type: 'all', target_relay: 'all' });
    expect(all.status).toBe(200);
    expect(all.body.success).toBe(true);
    const metrics = (await getJson(`${a.httpUrl}/metrics`)).body;
    expect(metrics.last_sync_timestamp).toBeGreaterThan(0);

    // Its own id: the relay pushes its own sync to its clients and peers.
    const client = await open(a);
    const self = await postJson(`${a.httpUrl}/sync`, { sync_type: 'MetricsSync', target_relay: 'relay-a' });
    expect(self.status).toBe(200);
    const pushed = await client.next((m) => m.type === 'MetricsSync');
    expect(pushed.data).toEqual({
      relay_id: 'relay-a',
      messages_sent: expect.any(Number),
      messages_received: expect.any(Number),
      sync_errors: expect.any(Number),
      connected_relays: 1,
    });
  });

  it('answers 404 for an unknown relay and 502 CONNECTION_ERROR for an unreachable one', async () => {
    const b = await start({ RELAY_ID: 'relay-b' });
    const a = await start({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl });
    await waitFor(async () => (await connectedRelays(a)).length === 1);
    const unknown = await postJson(`${a.httpUrl}/sync`, { sync_type: 'StateSync', target_relay: 'relay-zz' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'unknown relay: relay-zz' });
    await b.close();
    await waitFor(async () => (await connectedRelays(a)).length === 0);
    const gone = await postJson(`${a.httpUrl}/sync`, { sync_type: 'StateSync', target_relay: 'relay-b' });
    expect(gone.status).toBe(502);
    expect(gone.body.error).toMatchObject({ code: 'CONNECTION_ERROR', message: 'relay relay-b is unreachable' });
    const none = await postJson(`${a.httpUrl}/sync`, { sync_type: 'StateSync', target_relay: 'all' });
    expect(none.status).toBe(502);
    expect(none.body.error.code).toBe('CONNECTION_ERROR');
    expect((await getJson(`${a.httpUrl}/metrics`)).body.sync_errors).toBeGreaterThanOrEqual(2);
  });
});

describe('relay mesh: wss peers', () => {
  const { start, open, clients } = meshFixture();

  let certFile: string;
  let keyFile: string;
  let fingerprint: string;
  let dir: string;
  beforeAll(async () => {
    // Not tempDir(): those are removed after each test.
    dir = mkdtempSync(join(tmpdir(), 'relay-tls-'));
    const { cert, key } = await generateSelfSignedCertificate(['127.0.0.1']);
    certFile = join(dir, 'cert.pem');
    keyFile = join(dir, 'key.pem');
    writeFileSync(certFile, cert);
    writeFileSync(keyFile, key);
    fingerprint = certificateFingerprint(cert);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('connects to a wss peer whose certificate matches the pinned fingerprint', async () => {
    const b = await start({ RELAY_ID: 'relay-b', TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    expect(b.wsUrl.startsWith('wss://')).toBe(true);
    const a = await start({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl, RELAY_PEER_FINGERPRINT: fingerprint });
    await waitFor(async () => (await connectedRelays(a)).includes('relay-b'), 5_000, 'wss link');
    const client = await open(a);
    const pub = await connect(b.wsUrl, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` }, ca: [readFileSync(certFile, 'utf8')] });
    clients.push(pub);
    const event = transactionEvent();
    pub.send(event);
    expect(await client.next((m) => m.id === event.id)).toEqual(event);
  });

  it('connects to a wss peer signed by RELAY_PEER_CA_FILE', async () => {
    const b = await start({ RELAY_ID: 'relay-b', TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    const a = await start({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl, RELAY_PEER_CA_FILE: certFile });
    await waitFor(async () => (await connectedRelays(a)).includes('relay-b'), 5_000, 'wss link');
  });

  it('refuses a wss peer whose certificate matches no pin', async () => {
    const b = await start({ RELAY_ID: 'relay-b', TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    const wrongPin = fingerprint.replace(/^../, fingerprint.startsWith('00') ? '11' : '00');
    const a = await start({ RELAY_ID: 'relay-a', RELAY_PEERS: b.wsUrl, RELAY_PEER_FINGERPRINT: wrongPin });
    await waitFor(() => a.app.relay.counters.peer_connect_failures >= 2, 5_000, 'failed attempts');
    expect(await connectedRelays(a)).toEqual([]);
    expect(b.app.relay.connectionCount).toBe(0);
  });
});
