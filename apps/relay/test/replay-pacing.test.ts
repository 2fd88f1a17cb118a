import type { Envelope } from '@repo/relay-protocol';
import { getJson, publishAll, relaysAndClients, waitFor, type TestClient, type TestRelay } from './support/helpers';

// docs/relay.md, "Replay": the stored events are "read 500 at a time, paced by the client's send
// buffer", and a heal is "paced by the link's send buffer" (docs/relay.md, "The mesh heals"): a
// client or a peer that reads what it is sent must never be closed as a slow consumer (1008)
// because a replay or a heal wrote a whole page of large events at once.
describe('replay and heal are paced by the send buffer, event by event', () => {
  const { relays, start, open } = relaysAndClients({ MAX_SEND_BUFFER_BYTES: String(256 * 1024) });
  let n = 0;
  /** A BlockScanned event of about 100 KB (a publisher may add fields; they are kept). */
  const bigEvent = (): Envelope => ({
    type: 'BlockScanned',
    id: `big-${process.pid}-${Date.now()}-${++n}`,
    timestamp: Date.now(),
    data: { block_height: n, block_hash: 'b'.repeat(64), transactions_count: 1, silent_payments_found: 0, extra: 'x'.repeat(100_000) },
  });
  /** 150 events of 100 KB: far more than the send buffer bound and the loopback socket buffers together. */
  const bigEvents = () => Array.from({ length: 150 }, bigEvent);
  const blocks = (c: TestClient) => c.ofType('BlockScanned').map((m) => m.id);

  it('replays large stored events to a client that reads them without closing it as a slow consumer', async () => {
    const relay = await start({ RELAY_ID: 'relay-pacing' });
    const pub = await open(relay, true);
    const events = bigEvents();
    for (let i = 0; i < events.length; i += 10) await publishAll(pub, events.slice(i, i + 10));
    await pub.close();

    const client = await open(relay);
    await client.request('subscribe', { types: ['BlockScanned'], since: 0 });
    await waitFor(() => blocks(client).length >= events.length || client.closeCode !== undefined, 20_000, 'the replay');
    expect(client.closeCode).toBeUndefined();
    expect(blocks(client)).toEqual(events.map((e) => e.id));
    expect(relay.app.relay.counters.slow_consumers_dropped).toBe(0);
  }, 40_000);

  // docs/relay.md, "WebSocket limits": past MAX_SEND_BUFFER_BYTES of data queued for one client,
  // it is closed with 1008. The live events held for a client while its replay runs are queued data.
  it('closes a client that stops reading during its replay once the live events held for it pass the bound', async () => {
    const relay = await start({ RELAY_ID: 'relay-held', SLOW_CONSUMER_GRACE_MS: '200' });
    const pub = await open(relay, true);
    const backlog = bigEvents();
    for (let i = 0; i < backlog.length; i += 10) await publishAll(pub, backlog.slice(i, i + 10));

    const stalled = await open(relay);
    stalled.send({ type: 'subscribe', id: 'sub-stalled', data: { types: ['BlockScanned'], since: 0 } });
    stalled.ws.pause(); // reads nothing more: the replay waits for a send buffer that never drains
    await waitFor(() => relay.app.relay.counters.events_replayed > 0, 5_000, 'the replay started');
    // Live events meanwhile: held for the stalled client until its replay ends, which it never does.
    for (let i = 0; i < 30 && relay.app.relay.counters.slow_consumers_dropped === 0; i++) await publishAll(pub, [bigEvent()]);
    expect(relay.app.relay.counters.slow_consumers_dropped).toBe(1);
    stalled.ws.resume();
    await stalled.closed;
    expect([1006, 1008]).toContain(stalled.closeCode);
  }, 40_000);

  it('heals a peer with large events without closing the link as a slow consumer', async () => {
    const a = await start({ RELAY_ID: 'relay-a' });
    const b = await start({ RELAY_ID: 'relay-b', RELAY_PEERS: a.wsUrl });
    const linked = async (r: TestRelay) =>
      ((await getJson(`${r.httpUrl}/relays`)).body.relays as { relay_id: string; status: string }[]).some((p) => p.status === 'connected');
    await waitFor(() => linked(a), 5_000, 'linked');
    await b.close();
    relays.splice(relays.indexOf(b), 1);

    const pub = await open(a, true);
    const events = bigEvents();
    for (let i = 0; i < events.length; i += 10) await publishAll(pub, events.slice(i, i + 10));

    const b2 = await start({ RELAY_ID: 'relay-b', RELAY_PEERS: a.wsUrl, DATA_DIR: b.dataDir, WS_PORT: String(b.wsPort) });
    await waitFor(() => b2.app.relay.counters.events_stored >= events.length, 20_000, 'the heal stored at relay-b');
    expect(a.app.relay.counters.slow_consumers_dropped).toBe(0);
    expect(b2.app.relay.counters.peer_connect_failures).toBe(0);
    const client = await open(b2);
    await client.request('subscribe', { types: ['BlockScanned'], since: 0 });
    await waitFor(() => blocks(client).length >= events.length, 20_000, 'the replay at relay-b');
    expect(blocks(client)).toEqual(events.map((e) => e.id));
  }, 60_000);
});
