import WebSocket from 'ws';
import {
  PUBLISH_TOKEN,
  TestClient,
  WALLET,
  connect,
  getJson,
  removeTempDirs,
  startRelay,
  transactionEvent,
  waitFor,
  type TestRelay,
} from './support/helpers';

/** One relay for a describe block (RELAY_ID relay-ws-test), and its clients, closed after each test. */
function sharedRelay() {
  let relay: TestRelay;
  const clients: TestClient[] = [];
  // Clients carry a token with the payments scope: payment events are not public by default.
  const open = async (url = relay.wsUrl, options: object = WALLET) => {
    const c = new TestClient(url, options);
    clients.push(c);
    await c.opened();
    return c;
  };
  const publisher = () => open(relay.wsUrl, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });

  beforeAll(async () => {
    relay = await startRelay({ RELAY_ID: 'relay-ws-test' });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await relay.close();
    removeTempDirs();
  });
  return { open, publisher, url: () => relay.wsUrl };
}

describe('relay WebSocket', () => {
  const { open, publisher, url } = sharedRelay();

  describe('commands', () => {
    it('sends a StateSync on connection', async () => {
      const client = await open();
      const state = await client.next((m) => m.type === 'StateSync');
      expect(state.data).toMatchObject({ relay_id: 'relay-ws-test', state: 'running', version: expect.any(String) });
      expect(Number.isInteger(state.data.uptime)).toBe(true);
      expect(typeof state.id).toBe('string');
      expect(Number.isInteger(state.timestamp)).toBe(true);
    });

    it('answers ping with pong, the same id and the relay_id', async () => {
      const client = await open();
      const reply = await client.request('ping', {}, 'ping-1');
      expect(reply).toMatchObject({ type: 'pong', id: 'ping-1', data: { relay_id: 'relay-ws-test' } });
      expect(Math.abs(reply.timestamp - Date.now())).toBeLessThan(60_000);
    });

    it('answers get_status with status, the same id and the status fields', async () => {
      const client = await open();
      const reply = await client.request('get_status', {}, 'status-1');
      expect(reply.type).toBe('status');
      expect(reply.id).toBe('status-1');
      expect(reply.data).toEqual({
        relay_id: 'relay-ws-test',
        status: 'running',
        uptime: expect.any(Number),
        connected_relays: 0,
        last_block_height: expect.any(Number),
      });
    });

    it('narrows the events a client receives with subscribe', async () => {
      const blocksOnly = await open();
      const everything = await open();
      const sub = await blocksOnly.request('subscribe', { types: ['BlockScanned'] });
      expect(sub).toMatchObject({ type: 'subscribed', data: { types: ['BlockScanned'] } });
      const pub = await publisher();
      const tx = transactionEvent();
      const block = {
        type: 'BlockScanned',
        id: `blk-${Date.now()}`,
        timestamp: Date.now(),
        data: { block_height: 123456, block_hash: 'b'.repeat(64), transactions_count: 7, silent_payments_found: 1 },
      };
      pub.send(tx);
      pub.send(block);
      await everything.next((m) => m.id === block.id);
      await everything.next((m) => m.id === tx.id);
      await blocksOnly.next((m) => m.id === block.id);
      // The transaction was published first: had it been delivered it would be there already.
      expect(blocksOnly.received.some((m) => m.id === tx.id)).toBe(false);
      const status = await everything.request('get_status');
      expect(status.data.last_block_height).toBe(123456);
    });
  });

  describe('publishing', () => {
    it('acks a publisher and fans the event out to every client once', async () => {
      const a = await open();
      const b = await open();
      const pub = await publisher();
      const event = transactionEvent();
      pub.send(event);
      const ack = await pub.next((m) => m.type === 'ack');
      expect(ack).toMatchObject({ type: 'ack', id: event.id, data: {} });
      for (const c of [a, b]) {
        const got = await c.next((m) => m.id === event.id);
        expect(got).toEqual(event);
      }
      // Re-publishing the same id (a publisher retry) is acked but not delivered again.
      pub.send(event);
      await pub.next((m) => m.type === 'ack' && m !== ack);
      const after = await a.request('ping');
      expect(after.type).toBe('pong');
      expect(a.received.filter((m) => m.id === event.id)).toHaveLength(1);
    });

    it('refuses events from a connection without the publisher token and keeps it open', async () => {
      const client = await open();
      const event = transactionEvent();
      client.send(event);
      const err = await client.next((m) => m.type === 'error');
      expect(err.data).toMatchObject({ code: 'INVALID_MESSAGE', message: expect.stringMatching(/publisher token/) });
      expect((await client.request('ping')).type).toBe('pong');
    });

    it('accepts the publisher token as ?token=', async () => {
      const pub = await open(`${url()}/?token=${PUBLISH_TOKEN}`, {});
      const event = transactionEvent();
      pub.send(event);
      expect(await pub.next((m) => m.type === 'ack')).toMatchObject({ id: event.id });
    });
  });
});

describe('relay WebSocket: bad input and sizes', () => {
  const { open, publisher, url } = sharedRelay();

  describe('bad input', () => {
    const cases: [string, string, RegExp][] = [
      ['bad JSON', '{"type": "ping",', /not valid JSON/],
      ['a JSON array', '[1,2]', /not a JSON object/],
      ['a missing type', JSON.stringify({ id: 'x1', timestamp: 1, data: {} }), /missing field: type/],
      ['an unknown type', JSON.stringify({ type: 'launch_rockets', id: 'x2', timestamp: 1, data: {} }), /unknown message type/],
      ['a numeric type', JSON.stringify({ type: 42, id: 'x3', data: {} }), /invalid field: type/],
      ['a missing id', JSON.stringify({ type: 'ping', data: {} }), /missing field: id/],
      ['a numeric id', JSON.stringify({ type: 'ping', id: 7, data: {} }), /invalid field: id/],
      ['a string timestamp', JSON.stringify({ type: 'ping', id: 'x4', timestamp: 'now', data: {} }), /invalid field: timestamp/],
      ['an array data', JSON.stringify({ type: 'ping', id: 'x5', data: [] }), /invalid field: data/],
      [
        'subscribe to an unknown type',
        JSON.stringify({ type: 'subscribe', id: 'x6', data: { types: ['Nope'] } }),
        /invalid field: data.types/,
      ],
      [
        'subscribe with types not a list',
        JSON.stringify({ type: 'subscribe', id: 'x7', data: { types: 'BlockScanned' } }),
        /invalid field: data.types/,
      ],
      ['a server message sent by a client', JSON.stringify({ type: 'HealthSync', id: 'x8', data: {} }), /server message/],
    ];
    it.each(cases)('answers INVALID_MESSAGE to %s and keeps the connection open', async (_name, text, pattern) => {
      const client = await open();
      client.send(text);
      const err = await client.next((m) => m.type === 'error');
      expect(err.data.code).toBe('INVALID_MESSAGE');
      expect(err.data.message).toMatch(pattern);
      expect(typeof err.data.details).toBe('string');
      expect((await client.request('ping')).type).toBe('pong');
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
    });

    it('answers INVALID_MESSAGE to a binary frame', async () => {
      const client = await open();
      client.ws.send(Buffer.from([1, 2, 3]));
      const err = await client.next((m) => m.type === 'error');
      expect(err.data).toMatchObject({ code: 'INVALID_MESSAGE', message: expect.stringMatching(/binary/) });
    });

    it.each([
      ['a string amount', { amount: '0.1' }, /data.amount/],
      ['a fractional block_height', { block_height: 1.5 }, /data.block_height/],
      ['a missing txid', { txid: undefined }, /data.txid/],
    ])('answers INVALID_MESSAGE to an event with %s', async (_name, overrides, pattern) => {
      const pub = await publisher();
      const event = transactionEvent(overrides);
      pub.send(event);
      const err = await pub.next((m) => m.type === 'error');
      expect(err).toMatchObject({ id: event.id, data: { code: 'INVALID_MESSAGE', message: expect.stringMatching(pattern) } });
    });
  });

  describe('size limit', () => {
    it('closes a connection with 1009 when a message is over 1 MB', async () => {
      const client = await open();
      client.ws.send('x'.repeat(1024 * 1024 + 1));
      await client.closed;
      expect(client.closeCode).toBe(1009);
    });

    // A client's messages are bound lower (MAX_CLIENT_MESSAGE_BYTES, test/hostile.test.ts); a publisher's by this one.
    it('accepts a message just under the limit', async () => {
      const client = await publisher();
      client.send({ type: 'ping', id: 'big', data: { pad: 'y'.repeat(1024 * 1024 - 100) } });
      expect((await client.next((m) => m.id === 'big')).type).toBe('pong');
    });
  });

  it('answers 426 to a plain HTTP request on the WebSocket port', async () => {
    const { status, body } = await getJson(url().replace('ws:', 'http:'));
    expect(status).toBe(426);
    expect(body.error.code).toBe('INVALID_REQUEST');
  });
});

describe('relay WebSocket limits and authentication', () => {
  let relay: TestRelay | undefined;
  const clients: TestClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await relay?.close();
    relay = undefined;
    removeTempDirs();
  });

  it('refuses the upgrade with 503 past the connection limit', async () => {
    relay = await startRelay({ MAX_WS_CONNECTIONS: '2' });
    // The last slot is kept for an address with none open (test/hostile.test.ts, "room for newcomers").
    clients.push(await connect(relay.wsUrl), await connect(relay.wsUrl, { localAddress: '127.0.0.2' }));
    const third = new TestClient(relay.wsUrl);
    clients.push(third);
    await expect(third.opened()).rejects.toMatchObject({ status: 503 });
    const { body } = await getJson(`${relay.httpUrl}/metrics`);
    expect(body.upgrades_refused).toBe(1);
    // A slot frees up when a client leaves.
    await clients.shift()!.close();
    await waitFor(() => relay!.app.relay.connectionCount === 1);
    clients.push(await connect(relay.wsUrl, { localAddress: '127.0.0.3' }));
  });

  it('requires RELAY_AUTH_TOKEN when set: 401 without it, open with Bearer or ?token=', async () => {
    const token = 'client-auth-token-0123456789';
    relay = await startRelay({ RELAY_AUTH_TOKEN: token });
    const anonymous = new TestClient(relay.wsUrl);
    clients.push(anonymous);
    await expect(anonymous.opened()).rejects.toMatchObject({ status: 401 });
    const wrong = new TestClient(relay.wsUrl, { headers: { Authorization: 'Bearer wrong-token-000000000000' } });
    clients.push(wrong);
    await expect(wrong.opened()).rejects.toMatchObject({ status: 401 });
    const bearer = new TestClient(relay.wsUrl, { headers: { Authorization: `Bearer ${token}` } });
    clients.push(bearer);
    await bearer.opened();
    expect((await bearer.request('ping')).type).toBe('pong');
    const query = new TestClient(`${relay.wsUrl}/?token=${token}`);
    clients.push(query);
    await query.opened();
    // The publisher token also opens the door (the silent-payment service needs only one token).
    const pub = new TestClient(relay.wsUrl, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    clients.push(pub);
    await pub.opened();
  });

  it('terminates a client that stops answering the heartbeat', async () => {
    relay = await startRelay({ HEARTBEAT_INTERVAL_MS: '100' });
    const dead = new TestClient(relay.wsUrl, { autoPong: false });
    const alive = new TestClient(relay.wsUrl);
    clients.push(dead, alive);
    await Promise.all([dead.opened(), alive.opened()]);
    await dead.closed;
    expect(dead.closeCode).toBe(1006); // terminated: no close frame
    expect(alive.ws.readyState).toBe(WebSocket.OPEN);
    expect((await alive.request('ping')).type).toBe('pong');
  });

  it('disconnects a slow consumer once its send buffer passes the bound, and keeps serving the others', async () => {
    relay = await startRelay({ MAX_SEND_BUFFER_BYTES: '262144', SLOW_CONSUMER_GRACE_MS: '200' });
    const slow = await connect(relay.wsUrl, WALLET);
    const fast = await connect(relay.wsUrl, WALLET);
    const pub = await connect(relay.wsUrl, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    clients.push(slow, fast, pub);
    slow.ws.pause(); // stops reading: the relay's buffer for it grows
    const pad = 'p'.repeat(500 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < 80 && relay.app.relay.counters.slow_consumers_dropped === 0; i++) {
      const event = transactionEvent({ address: pad });
      ids.push(event.id);
      pub.send(event);
      await pub.next((m) => m.type === 'ack' && m.id === event.id);
    }
    expect(relay.app.relay.counters.slow_consumers_dropped).toBe(1);
    for (const id of ids) await fast.next((m) => m.id === id);
    slow.ws.resume();
    await slow.closed;
    expect([1006, 1008]).toContain(slow.closeCode);
    await waitFor(() => relay!.app.relay.connectionCount === 2, 5_000, 'slow consumer gone');
  });
});
