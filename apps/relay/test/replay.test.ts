import { randomBytes } from 'node:crypto';
import { startRedis, type RedisHandle } from '@repo/redis/testing';
import {
  PUBLISH_TOKEN,
  blockEvent,
  connect,
  publishAll,
  removeTempDirs,
  startRelay,
  tempDir,
  waitFor,
  type TestClient,
  type TestRelay,
} from './support/helpers';

describe.each(['sqlite', 'redis'] as const)('replay (%s event log)', (store) => {
  let redis: RedisHandle | undefined;
  const prefixes: string[] = [];
  const relays: TestRelay[] = [];
  const clients: TestClient[] = [];
  beforeAll(async () => {
    if (store === 'redis') redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(relays.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    if (redis) {
      for (const p of prefixes) await redis.cleanup(p);
      await redis.stop();
    }
    removeTempDirs();
  });

  /** The environment of one relay's event log (the same values restart it on the same log). */
  const logEnv = (): Record<string, string> => {
    if (store === 'sqlite') return { DATA_DIR: tempDir() };
    const prefix = `relay-test:${randomBytes(6).toString('hex')}:`;
    prefixes.push(prefix);
    return { DATA_DIR: tempDir(), RELAY_EVENT_STORE: 'redis', REDIS_URL: redis!.url, REDIS_KEY_PREFIX: prefix };
  };
  const start = async (env: Record<string, string>) => {
    const r = await startRelay({ RELAY_ID: 'relay-replay', ...env });
    relays.push(r);
    return r;
  };
  const open = async (relay: TestRelay, publisher = false) => {
    const c = await connect(relay.wsUrl, publisher ? { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } } : {});
    clients.push(c);
    return c;
  };
  const blocks = (c: TestClient) => c.ofType('BlockScanned').map((m) => m.id);

  it('sends a client that reconnects with since exactly the 1,000 events it missed, in order, across a restart, then live ones', async () => {
    const env = logEnv();
    const first = await start(env);
    const pub = await open(first, true);
    const seenLast = blockEvent();
    await publishAll(pub, [seenLast]);
    const missed = Array.from({ length: 1000 }, () => blockEvent());
    await publishAll(pub, missed);
    await pub.close();
    await first.close();
    relays.splice(relays.indexOf(first), 1);

    const second = await start(env);
    const client = await open(second);
    const sub = await client.request('subscribe', { types: ['BlockScanned'], since: seenLast.id });
    expect(sub).toMatchObject({ type: 'subscribed', data: { types: ['BlockScanned'], since: seenLast.id } });
    await waitFor(() => blocks(client).length >= 1000, 10_000, '1000 replayed events');
    const live = blockEvent();
    const pub2 = await open(second, true);
    await publishAll(pub2, [live]);
    await client.next((m) => m.id === live.id);
    expect(blocks(client)).toEqual([...missed.map((e) => e.id), live.id]);
    expect(client.ofType('BlockScanned')[0]).toEqual(missed[0]);
  });

  it('has no gap and no duplicate at the seam while events keep arriving during the replay', async () => {
    const relay = await start(logEnv());
    const pub = await open(relay, true);
    const before = blockEvent();
    await publishAll(pub, [before]);
    const stored = Array.from({ length: 2000 }, () => blockEvent());
    await publishAll(pub, stored);
    const client = await open(relay);
    const during = Array.from({ length: 300 }, () => blockEvent());
    client.send({ type: 'subscribe', id: 'sub-1', data: { since: before.id } });
    // Published in bursts while the replay is being read and sent.
    for (let i = 0; i < during.length; i += 30) {
      for (const e of during.slice(i, i + 30)) pub.send(e);
      await new Promise((r) => setImmediate(r));
    }
    const all = [...stored, ...during].map((e) => e.id);
    await waitFor(() => blocks(client).length >= all.length, 15_000, 'replay and live events');
    await client.request('ping');
    expect(blocks(client)).toEqual(all);
  });

  it('accepts a time in ms as since', async () => {
    const relay = await start(logEnv());
    const pub = await open(relay, true);
    await publishAll(pub, [blockEvent()]);
    await new Promise((r) => setTimeout(r, 20));
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    const later = [blockEvent(), blockEvent()];
    await publishAll(pub, later);
    const client = await open(relay);
    await client.request('subscribe', { since });
    await waitFor(() => blocks(client).length >= 2, 5_000, 'events since the time');
    await client.request('ping');
    expect(blocks(client)).toEqual(later.map((e) => e.id));
  });

  it('answers an unknown since with REPLAY_UNAVAILABLE and the oldest point, and keeps the client live', async () => {
    const relay = await start(logEnv());
    const pub = await open(relay, true);
    const oldest = blockEvent();
    await publishAll(pub, [oldest, blockEvent()]);
    const client = await open(relay);
    const err = await client.request('subscribe', { since: 'no-such-event' });
    expect(err).toMatchObject({
      type: 'error',
      data: {
        code: 'REPLAY_UNAVAILABLE',
        oldest_id: oldest.id,
        oldest_timestamp: expect.any(Number),
        details: expect.stringMatching(/no-such-event/),
      },
    });
    const live = blockEvent();
    await publishAll(pub, [live]);
    await client.next((m) => m.id === live.id);
  });
});

describe('replay retention', () => {
  afterAll(() => removeTempDirs());

  it('refuses a since the retention removed, giving the oldest event kept', async () => {
    const dataDir = tempDir();
    let relay = await startRelay({ DATA_DIR: dataDir });
    const pub = await connect(relay.wsUrl, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    const events = Array.from({ length: 10 }, () => blockEvent());
    await publishAll(pub, events);
    await pub.close();
    await relay.close();
    // Restarted with a count of 5: the retention runs at start.
    relay = await startRelay({ DATA_DIR: dataDir, RELAY_RETENTION_EVENTS: '5' });
    const client = await connect(relay.wsUrl);
    try {
      const err = await client.request('subscribe', { since: events[2]!.id });
      expect(err.data).toMatchObject({ code: 'REPLAY_UNAVAILABLE', oldest_id: events[5]!.id });
      const timeErr = await client.request('subscribe', { since: 0 });
      expect(timeErr.data.code).toBe('REPLAY_UNAVAILABLE');
      const ok = await client.request('subscribe', { since: events[5]!.id });
      expect(ok.type).toBe('subscribed');
      await waitFor(() => client.ofType('BlockScanned').length === 4, 5_000, 'the 4 kept after the 6th');
    } finally {
      await client.close();
      await relay.close();
    }
  });
});
