import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startRedis, type RedisHandle } from '@repo/redis/testing';
import { createRedisLog, createSqliteLog, seqAfter, type EventLog, type Retention } from '../src/event-log';
import { removeTempDirs, tempDir } from './support/helpers';

const event = (id: string, type = 'BlockScanned') => ({ id, type, text: JSON.stringify({ type, id, timestamp: 1, data: {} }) });
const DAY = 24 * 3600_000;

describe('seqAfter', () => {
  it.each([
    ['10', '9', true],
    ['9', '10', false],
    ['5', '5', false],
    ['1700000000001-0', '1700000000000-7', true],
    ['1700000000000-10', '1700000000000-9', true],
    ['1700000000000-0', '1700000000000-0', false],
  ])('%s after %s: %p', (a, b, expected) => {
    expect(seqAfter(a, b)).toBe(expected);
  });
});

describe.each(['sqlite', 'redis'] as const)('event log (%s)', (kind) => {
  let redis: RedisHandle | undefined;
  const prefixes: string[] = [];
  const logs: EventLog[] = [];
  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(logs.splice(0).map((l) => l.close()));
    if (redis) {
      for (const p of prefixes) await redis.cleanup(p);
      await redis.stop();
    }
    removeTempDirs();
  });

  /** A fresh, empty log; `relayId` matters for a shared Redis log only. */
  const open = async (retention: Retention = { maxAgeMs: 7 * DAY, maxEvents: 1_000_000 }, relayId = 'r1', prefix?: string) => {
    let log: EventLog;
    if (kind === 'sqlite') log = createSqliteLog({ file: join(prefix ?? tempDir(), 'events.db'), retention });
    else {
      const p = prefix ?? `relay-test:${randomBytes(6).toString('hex')}:`;
      prefixes.push(p);
      log = await createRedisLog({ url: redis!.url, keyPrefix: p, relayId, retention });
    }
    logs.push(log);
    return log;
  };

  it('appends in order, finds a duplicate id, and reads after a seq page by page', async () => {
    const log = await open();
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((id) => log.append(event(id))));
    expect(results.map((r) => r.fresh)).toEqual([true, true, true, true]);
    for (let i = 1; i < results.length; i++) expect(seqAfter(results[i]!.seq, results[i - 1]!.seq)).toBe(true);
    const again = await log.append(event('b'));
    expect(again).toMatchObject({ seq: results[1]!.seq, fresh: false });
    await Promise.all(results.map((r) => r.durable));
    expect((await log.readAfter(null, 10)).map((e) => e.id)).toEqual(['a', 'b', 'c', 'd']);
    const page = await log.readAfter(results[0]!.seq, 2);
    expect(page.map((e) => e.id)).toEqual(['b', 'c']);
    expect(JSON.parse(page[0]!.text)).toMatchObject({ id: 'b', type: 'BlockScanned' });
    expect(page[0]!.storedAt).toBeGreaterThan(Date.now() - 60_000);
  });

  it('locates a since id, a since time, and refuses an unknown id with the oldest point', async () => {
    const log = await open();
    const a = await log.append(event('a'));
    await new Promise((r) => setTimeout(r, 5));
    const middle = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await log.append(event('b'));
    expect(await log.locate({ id: 'a' })).toEqual({ ok: true, after: a.seq });
    expect(await log.locate({ time: middle })).toEqual({ ok: true, after: a.seq });
    expect(await log.locate({ time: 0 })).toEqual({ ok: true, after: null });
    const unknown = await log.locate({ id: 'nope' });
    expect(unknown).toEqual({ ok: false, oldest: { oldest_id: 'a', oldest_timestamp: expect.any(Number) } });
  });

  it('removes events past the count and the age, and then refuses a since they covered', async () => {
    const log = await open({ maxAgeMs: DAY, maxEvents: 3 });
    for (const id of ['e1', 'e2', 'e3', 'e4', 'e5']) await log.append(event(id));
    expect(await log.trim()).toBe(2);
    expect((await log.readAfter(null, 10)).map((e) => e.id)).toEqual(['e3', 'e4', 'e5']);
    expect(await log.locate({ id: 'e1' })).toMatchObject({ ok: false, oldest: { oldest_id: 'e3' } });
    expect(await log.locate({ time: 0 })).toMatchObject({ ok: false, oldest: { oldest_id: 'e3' } });
    expect((await log.locate({ id: 'e3' })).ok).toBe(true);
    // A day later everything is past the age.
    expect(await log.trim(Date.now() + DAY + 1_000)).toBe(3);
    expect(await log.readAfter(null, 10)).toEqual([]);
    expect(await log.locate({ time: Date.now() - 1_000 })).toEqual({ ok: false, oldest: {} });
    expect((await log.locate({ time: Date.now() + 10_000 })).ok).toBe(true);
  });

  it('keeps small values with the log', async () => {
    const log = await open();
    expect(await log.getMeta('peer:x')).toBeUndefined();
    await log.setMeta('peer:x', '123');
    expect(await log.getMeta('peer:x')).toBe('123');
  });

  if (kind === 'redis') {
    it('shares one stream between relays, each deciding on its own whether an event is new to it', async () => {
      const prefix = `relay-test:${randomBytes(6).toString('hex')}:`;
      const one = await open(undefined, 'r1', prefix);
      const two = await open(undefined, 'r2', prefix);
      const first = await one.append(event('shared'));
      const second = await two.append(event('shared'));
      expect(first.fresh).toBe(true);
      expect(second).toMatchObject({ seq: first.seq, fresh: true });
      expect((await two.append(event('shared'))).fresh).toBe(false);
      expect((await two.readAfter(null, 10)).map((e) => e.id)).toEqual(['shared']);
    });
  }
});
