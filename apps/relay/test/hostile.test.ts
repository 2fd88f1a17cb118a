import WebSocket from 'ws';
import { rawExchange } from '@repo/http/testing';
import {
  PUBLISH_TOKEN,
  WALLET,
  blockEvent,
  connect,
  publishAll,
  relaysAndClients,
  waitFor,
  type TestClient,
  type TestRelay,
} from './support/helpers';

// Issue 66 §6: hostile clients (docs/relay.md, "WebSocket limits" and "HTTP errors").
const PUBLISHER = { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } };
const port = (url: string) => Number(new URL(url).port);

describe('relay: messages that cost more than they may', () => {
  const { start, clients } = relaysAndClients();
  const from = async (relay: TestRelay, localAddress: string, options: object = {}) => {
    const c = await connect(relay.wsUrl, { localAddress, ...options });
    clients.push(c);
    return c;
  };
  const rejected = (relay: TestRelay) => relay.app.relay.counters.messages_rejected;
  /** The median of `n` ping round trips, one after the other (ms): one stall of a busy machine does not move it. */
  const medianPing = async (c: TestClient, n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await c.request('ping', {}, `probe-${Date.now()}-${i}`);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  };

  it("keeps another client's pings answered while four connections send nesting attacks, refused before parsing", async () => {
    const relay = await start();
    const probe = await from(relay, '127.0.0.3');
    const calm = await medianPing(probe, 5);
    // Four anonymous connections, as in the issue: nested [ up to the client size bound, then a megabyte of it.
    const attackers = await Promise.all(Array.from({ length: 4 }, () => from(relay, '127.0.0.2')));
    const nested = Buffer.from('['.repeat(16_000));
    const perAttacker = 50;
    const cpu = process.cpuUsage();
    for (const a of attackers) for (let i = 0; i < perAttacker; i++) a.ws.send(nested);
    for (const a of attackers) a.ws.send(Buffer.from('['.repeat(1_000_000)));
    const underAttack = await medianPing(probe, 11);
    await Promise.all(attackers.map((a) => a.closed));
    // Each frame dropped unread (over the rate) or refused from its first 33 bytes (nesting).
    expect(rejected(relay)).toBe(4 * perAttacker);
    const errors = attackers.flatMap((a) => a.ofType('error')).map((m) => m.data.message);
    expect(new Set(errors)).toEqual(new Set(['message nested too deep', 'message rate limit exceeded']));
    // The megabyte frame is refused from its header (MAX_CLIENT_MESSAGE_BYTES), never buffered.
    expect(attackers.map((a) => a.closeCode)).toEqual([1009, 1009, 1009, 1009]);
    const used = process.cpuUsage(cpu);
    // Before the bounds, each megabyte cost ~0.5 s of parsing. Generous bounds, for a busy machine:
    // the relay and these clients together spend under 2 s of CPU; the probe's median round trip stays under 1 s (or 20 calm ones).
    expect((used.user + used.system) / 1000).toBeLessThan(2_000);
    expect(underAttack).toBeLessThan(Math.max(1_000, 20 * calm));
  }, 90_000);

  it('closes a client (no token) whose message is over MAX_CLIENT_MESSAGE_BYTES with 1009, from the frame header; a publisher may send more', async () => {
    const relay = await start({ MAX_CLIENT_MESSAGE_BYTES: '1024' });
    const client = await from(relay, '127.0.0.2');
    const publisher = await from(relay, '127.0.0.2', PUBLISHER);
    const big = JSON.stringify({ type: 'ping', id: 'big', data: { pad: 'x'.repeat(2_000) } });
    publisher.send(big);
    expect(await publisher.next((m) => m.id === 'big')).toMatchObject({ type: 'pong' });
    client.send(big);
    await client.closed;
    expect(client.closeCode).toBe(1009);
  });

  it('drops what a client sends past CLIENT_MESSAGES_PER_SECOND unread, with one error a second', async () => {
    const relay = await start({ CLIENT_MESSAGES_PER_SECOND: '20' });
    const client = await from(relay, '127.0.0.2');
    for (let i = 0; i < 200; i++) client.send({ type: 'ping', id: `p${i}` });
    const last = await from(relay, '127.0.0.4');
    await waitFor(() => rejected(relay) + client.ofType('pong').length === 200, 30_000, 'every ping answered or dropped');
    expect(client.ofType('pong').length).toBeLessThan(200);
    expect(client.ofType('error')[0]).toMatchObject({ data: { code: 'RATE_LIMITED', message: 'message rate limit exceeded' } });
    expect(client.ofType('error').length).toBeLessThan(10);
    // Another address is not affected.
    expect(await last.request('ping')).toMatchObject({ type: 'pong' });
  });

  it('shares CLIENT_MESSAGES_PER_SECOND_PER_IP between the connections of one address', async () => {
    const relay = await start({ CLIENT_MESSAGES_PER_SECOND_PER_IP: '30' });
    const six = await Promise.all(Array.from({ length: 6 }, () => from(relay, '127.0.0.2')));
    for (const c of six) for (let i = 0; i < 20; i++) c.send({ type: 'ping', id: `p${i}` });
    const pongs = () => six.reduce((n, c) => n + c.ofType('pong').length, 0);
    await waitFor(() => rejected(relay) + pongs() === 120, 30_000, 'every ping answered or dropped');
    // 20 each is within the connection's own limit; together they pass the address's.
    expect(rejected(relay)).toBeGreaterThan(0);
  });
});

describe('relay: room for newcomers', () => {
  const sockets: WebSocket[] = [];
  const { start, clients } = relaysAndClients();
  afterEach(() => {
    for (const ws of sockets.splice(0)) ws.terminate();
  });
  /** Opens a socket from `localAddress`: 'open', or the HTTP status (or 'closed') of a refusal. */
  const attempt = (relay: TestRelay, localAddress: string) =>
    new Promise<number | 'open' | 'closed'>((resolve) => {
      const ws = new WebSocket(relay.wsUrl, { localAddress });
      sockets.push(ws);
      ws.once('open', () => resolve('open'));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      ws.once('error', () => resolve('closed'));
    });

  it('30 addresses holding 990 idle sockets leave room for 60 new addresses', async () => {
    const relay = await start();
    const held = await Promise.all(Array.from({ length: 990 }, (_, i) => attempt(relay, `127.0.0.${10 + (i % 30)}`)));
    // Of MAX_WS_CONNECTIONS (1000), the last tenth is kept for addresses with none open.
    expect(held.filter((s) => s === 'open').length).toBe(900);
    expect(new Set(held.filter((s) => s !== 'open'))).toEqual(new Set([503]));
    const newcomers = await Promise.all(Array.from({ length: 60 }, (_, i) => attempt(relay, `127.0.1.${1 + i}`)));
    expect(newcomers.filter((s) => s === 'open').length).toBe(60);
  }, 120_000);

  it('closes an anonymous client that has not subscribed to a type within IDLE_CLIENT_TIMEOUT_MS (1008)', async () => {
    const relay = await start({ IDLE_CLIENT_TIMEOUT_MS: '300' });
    const open = async (options: object = {}) => {
      const c = await connect(relay.wsUrl, options);
      clients.push(c);
      return c;
    };
    // Opened first: closed before the idle ones if the rule wrongly applied to them.
    const subscribed = await open();
    await subscribed.request('subscribe', { types: ['BlockScanned'] });
    const withToken = await open(WALLET);
    const toNothing = await open();
    await toNothing.request('subscribe', { types: [] });
    const silent = await open();
    await Promise.all([silent.closed, toNothing.closed]);
    expect([silent.closeCode, silent.closeReason]).toEqual([1008, 'idle: subscribe to at least one type within IDLE_CLIENT_TIMEOUT_MS']);
    expect(toNothing.closeCode).toBe(1008);
    expect([subscribed.ws.readyState, withToken.ws.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
  });
});

describe('relay: a reconnecting client gets each event once', () => {
  const { start, open, clients } = relaysAndClients();
  const txIds = (c: TestClient) => c.received.filter((m) => m.type === 'BlockScanned').map((m) => m.id);

  it('does not replay the events it sent live before the subscribed reply', async () => {
    const relay = await start();
    const pub = await open(relay, true);
    const events = Array.from({ length: 60 }, () => blockEvent());
    const first = await connect(relay.wsUrl, WALLET);
    clients.push(first);
    await publishAll(pub, events.slice(0, 10));
    await first.next((m) => m.id === events[9]!.id);
    await first.close();
    // Missed while away.
    await publishAll(pub, events.slice(10, 30));
    const again = await connect(relay.wsUrl, WALLET);
    clients.push(again);
    // Live before it subscribes (the documented flow: connect, then subscribe with since).
    await publishAll(pub, events.slice(30, 40));
    await again.next((m) => m.id === events[39]!.id);
    const reply = again.request('subscribe', { since: events[9]!.id });
    await publishAll(pub, events.slice(40));
    await reply;
    await again.next((m) => m.id === events[59]!.id);
    const got = txIds(again);
    expect(got.length).toBe(new Set(got).size);
    expect(new Set(got)).toEqual(new Set(events.slice(10).map((e) => e.id)));
    // Before the reply, the live ones in order; from the reply on, the rest in the log's order.
    const after = again.received.slice(again.received.findIndex((m) => m.type === 'subscribed') + 1);
    const replayed = after.filter((m) => m.type === 'BlockScanned').map((m) => m.id);
    const expected = events
      .slice(10)
      .map((e) => e.id)
      .filter((id) => replayed.includes(id));
    expect(replayed).toEqual(expected);
  });
});

describe('relay: a client that reconnects with ?since= on its URL', () => {
  const { start, open, clients } = relaysAndClients();
  const blocks = (c: TestClient) => c.received.filter((m) => m.type === 'BlockScanned').map((m) => m.id);

  it('gets every event after the cursor once and in order, while events keep coming', async () => {
    const relay = await start();
    const pub = await open(relay, true);
    const events = Array.from({ length: 300 }, () => blockEvent());
    await publishAll(pub, events.slice(0, 100));
    // Published while the client connects: live ones reach it only after its replay.
    const during = publishAll(pub, events.slice(100));
    const client = await connect(`${relay.wsUrl}/?since=${encodeURIComponent(events[49]!.id)}`, WALLET);
    clients.push(client);
    await during;
    await client.next((m) => m.id === events[299]!.id, 20_000);
    expect(client.received.find((m) => m.type === 'subscribed')).toMatchObject({ id: 'since', data: { since: events[49]!.id } });
    expect(blocks(client)).toEqual(events.slice(50).map((e) => e.id));
  });

  it('answers a bad cursor with the error of subscribe, and stays open', async () => {
    const relay = await start();
    const client = await connect(`${relay.wsUrl}/?since=no-such-event`, WALLET);
    clients.push(client);
    expect(await client.next((m) => m.type === 'error')).toMatchObject({ id: 'since', data: { code: 'REPLAY_UNAVAILABLE' } });
    expect(await client.request('ping')).toMatchObject({ type: 'pong' });
  });
});

describe('relay: a mesh of three with relays stopped and restarted in turn', () => {
  const { start, clients } = relaysAndClients();
  const blocks = (c: TestClient) => c.received.filter((m) => m.type === 'BlockScanned').map((m) => m.id);
  const linked = (r: TestRelay) => r.app.relay.relays().filter((e) => e.status === 'connected').length;
  const open = async (relay: TestRelay, options: object = WALLET) => {
    const c = await connect(relay.wsUrl, options);
    clients.push(c);
    return c;
  };

  it('gives each client every event once when it reconnects with since to its restarted relay', async () => {
    const a = await start({ RELAY_ID: 'relay-a' });
    const b0 = await start({ RELAY_ID: 'relay-b', RELAY_PEERS: a.wsUrl });
    const c0 = await start({ RELAY_ID: 'relay-c', RELAY_PEERS: `${a.wsUrl},${b0.wsUrl}` });
    await waitFor(() => [a, b0, c0].every((r) => linked(r) === 2), 20_000, 'the mesh up');
    const publisher = await open(a, PUBLISHER);
    const events = Array.from({ length: 250 }, () => blockEvent());
    const batch = (i: number) => events.slice(i * 50, (i + 1) * 50);
    const watchers = { a: await open(a), b: await open(b0), c: await open(c0) };
    /** By relay: the events its reconnected watcher must get, each once. */
    const wanted = new Map<string, string[]>();
    await publishAll(publisher, batch(0));
    for (const w of Object.values(watchers)) await w.next((m) => m.id === events[49]!.id, 20_000);

    /** Stops `relay`, publishes a batch while it is down, restarts it and reconnects its watcher with since during the next batch. */
    const stopAndReturn = async (relay: TestRelay, id: string, peers: string, down: number): Promise<TestRelay> => {
      const watcher = id === 'relay-b' ? watchers.b : watchers.c;
      const last = blocks(watcher).at(-1)!;
      wanted.set(
        id,
        events.slice(events.findIndex((e) => e.id === last) + 1).map((e) => e.id),
      );
      await relay.close();
      await publishAll(publisher, batch(down));
      const again = await start({ RELAY_ID: id, RELAY_PEERS: peers, DATA_DIR: relay.dataDir, WS_PORT: String(relay.wsPort) });
      const client = await open(again);
      const during = publishAll(publisher, batch(down + 1));
      // As a real client does: it is sent live events before its subscribe arrives.
      const live = new Set(batch(down + 1).map((e) => e.id));
      await client.next((m) => live.has(m.id), 20_000);
      await client.request('subscribe', { since: last });
      await during;
      if (id === 'relay-b') watchers.b = client;
      else watchers.c = client;
      return again;
    };
    const b1 = await stopAndReturn(b0, 'relay-b', a.wsUrl, 1);
    await waitFor(() => linked(c0) === 2, 20_000, 'relay-c linked to the restarted relay-b');
    await stopAndReturn(c0, 'relay-c', `${a.wsUrl},${b1.wsUrl}`, 3);
    const lastId = events.at(-1)!.id;
    for (const w of Object.values(watchers)) await w.next((m) => m.id === lastId, 20_000);
    // Once every relay holds every event, no copy is still on its way.
    await Promise.all(Object.values(watchers).map((w) => w.request('ping')));
    const first = blocks(watchers.a);
    expect(first).toEqual(events.map((e) => e.id));
    for (const [id, w] of [
      ['relay-b', watchers.b],
      ['relay-c', watchers.c],
    ] as const) {
      const got = blocks(w);
      expect({ id, duplicates: got.length - new Set(got).size }).toEqual({ id, duplicates: 0 });
      expect(new Set(got)).toEqual(new Set(wanted.get(id)));
    }
  }, 120_000);
});

describe('relay: HTTP methods and requests it does not serve', () => {
  const { start } = relaysAndClients();

  it('answers OPTIONS with the 404 error record, /%zz with 400 and two Host headers with 400', async () => {
    const relay = await start();
    const http = port(relay.httpUrl);
    const options = await rawExchange(http, 'OPTIONS /sync HTTP/1.1\r\nHost: x\r\n\r\n');
    expect([options.status, JSON.parse(options.body)]).toEqual([
      404,
      { error: { code: 'NOT_FOUND', message: 'no such endpoint: OPTIONS /sync' } },
    ]);
    const bad = await rawExchange(http, 'GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect([bad.status, JSON.parse(bad.body)]).toEqual([
      400,
      { error: { code: 'INVALID_REQUEST', message: 'malformed percent-encoding in the path' } },
    ]);
    const twoHosts = await rawExchange(http, 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n');
    expect(twoHosts.status).toBe(400);
    expect(JSON.parse(twoHosts.body)).toMatchObject({
      error: { code: 'INVALID_REQUEST', message: 'more than one Host header (RFC 9112, section 3.2)' },
    });
    const upgrade = await rawExchange(
      port(relay.wsUrl),
      'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    expect(upgrade.status).toBe(400);
  });
});
