import { connectRedis } from '@repo/redis';
import { type Logger } from '@repo/service';
import { type EventLog, type OldestPoint, type Retention, type StoredEvent } from './event-log';

/** Options of {@link createRedisLog}. */
export interface RedisLogOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. Never logged (it may hold a password). */
  url: string;
  /** Prefix of every key (default `relay:`). */
  keyPrefix?: string;
  /** This relay's id: whether an event is new is decided per relay (several relays may share the log). */
  relayId: string;
  retention: Retention;
  logger?: Logger;
  /** Give up connecting at start after this many ms (default 10000). */
  connectTimeoutMs?: number;
}

// Appends once per id (the id key remembers the stream entry, and expires with the retention),
// and marks the id as seen by this relay: `fresh` is 1 the first time this relay appends it,
// even when another relay sharing the log stored it first (its clients still need it).
const APPEND = `
local sid = redis.call('HGET', KEYS[1], 's')
if not sid then
  sid = redis.call('XADD', KEYS[2], '*', 'id', ARGV[2], 'type', ARGV[3], 'e', ARGV[1])
  redis.call('HSET', KEYS[1], 's', sid)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return {sid, redis.call('HSETNX', KEYS[1], ARGV[5], '1')}
`;

type RawEntry = [string, string[]];

/** The greatest stream id of a time before `ms` (ms >= 1): stream ids are `<ms>-<64-bit n>`. */
const lastIdBefore = (ms: number) => `${ms - 1}-18446744073709551615`;

/**
 * The event log in a Redis stream (XADD, XRANGE from an id: Redis Streams, for relays behind a
 * balancer that share one log). Stream ids (`<ms>-<n>`) are the seqs. Durability is Redis's: run
 * it with `appendonly yes` and `appendfsync always` for the guarantee the SQLite log gives.
 * Rejects when Redis cannot be reached within `connectTimeoutMs`.
 */
export async function createRedisLog(options: RedisLogOptions): Promise<EventLog> {
  const p = options.keyPrefix ?? 'relay:';
  const stream = `${p}events`;
  const metaKey = `${p}meta`;
  const idKey = (id: string) => `${p}id:${id}`;
  const client = await connectRedis({
    url: options.url,
    connectTimeoutMs: options.connectTimeoutMs,
    logger: options.logger,
    logPrefix: 'event log: ',
  });

  const cmd = <T>(args: string[]) => client.sendCommand<T>(args);
  const toStored = ([seq, fields]: RawEntry): StoredEvent => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    return { seq, id: f.id ?? '', type: f.type ?? '', storedAt: Number(seq.split('-')[0]), text: f.e ?? '' };
  };
  const msOf = (seq: string) => Number(seq.split('-')[0]);
  const trimmedThrough = async () => Number((await cmd<string | null>(['HGET', metaKey, 'trimmed_through'])) ?? -1);
  const raiseTrimmed = async (t: number) => {
    if (t > (await trimmedThrough())) await cmd(['HSET', metaKey, 'trimmed_through', String(t)]);
  };
  const oldestPoint = async (): Promise<OldestPoint> => {
    const first = await cmd<RawEntry[]>(['XRANGE', stream, '-', '+', 'COUNT', '1']);
    if (first.length === 0) return {};
    const e = toStored(first[0]!);
    return { oldest_id: e.id, oldest_timestamp: e.storedAt };
  };
  let closed = false;

  return {
    kind: 'redis',
    async append(event) {
      const reply = await client.eval(APPEND, {
        keys: [idKey(event.id), stream],
        arguments: [event.text, event.id, event.type, String(options.retention.maxAgeMs), `r:${options.relayId}`],
      });
      const [seq, fresh] = reply as [string, number];
      // Redis answered after applying the script: as durable as its appendfsync setting makes it.
      return { seq, fresh: fresh === 1, durable: Promise.resolve() };
    },
    async locate(cursor) {
      if ('id' in cursor) {
        const sid = await cmd<string | null>(['HGET', idKey(cursor.id), 's']);
        // The id key may outlive its entry when the count retention removed it.
        if (sid === null || (await cmd<RawEntry[]>(['XRANGE', stream, sid, sid])).length === 0)
          return { ok: false, oldest: await oldestPoint() };
        return { ok: true, after: sid };
      }
      if (cursor.time <= (await trimmedThrough())) return { ok: false, oldest: await oldestPoint() };
      const before = cursor.time <= 0 ? [] : await cmd<RawEntry[]>(['XREVRANGE', stream, lastIdBefore(cursor.time), '-', 'COUNT', '1']);
      return { ok: true, after: before.length === 0 ? null : before[0]![0] };
    },
    async readAfter(after, limit) {
      const entries = await cmd<RawEntry[]>(['XRANGE', stream, after === null ? '-' : `(${after}`, '+', 'COUNT', String(limit)]);
      return entries.map(toStored);
    },
    async trim(now = Date.now()) {
      let removed = 0;
      const cutoff = now - options.retention.maxAgeMs;
      const newestOld = cutoff <= 0 ? [] : await cmd<RawEntry[]>(['XREVRANGE', stream, lastIdBefore(cutoff), '-', 'COUNT', '1']);
      if (newestOld.length > 0) {
        await raiseTrimmed(msOf(newestOld[0]![0]));
        removed += await cmd<number>(['XTRIM', stream, 'MINID', `${cutoff}-0`]);
      }
      const excess = (await cmd<number>(['XLEN', stream])) - options.retention.maxEvents;
      if (excess > 0) {
        // The newest entry to remove, read page by page (ids only matter, the texts are dropped).
        let last: string | undefined;
        let left = excess;
        while (left > 0) {
          const page = await cmd<RawEntry[]>([
            'XRANGE',
            stream,
            last === undefined ? '-' : `(${last}`,
            '+',
            'COUNT',
            String(Math.min(left, 10_000)),
          ]);
          if (page.length === 0) break;
          last = page[page.length - 1]![0];
          left -= page.length;
        }
        if (last !== undefined) {
          await raiseTrimmed(msOf(last));
          const [ms, n] = last.split('-');
          removed += await cmd<number>(['XTRIM', stream, 'MINID', `${ms}-${BigInt(n ?? '0') + 1n}`]);
        }
      }
      return removed;
    },
    async count() {
      return cmd<number>(['XLEN', stream]);
    },
    async getMeta(key) {
      return (await cmd<string | null>(['HGET', metaKey, `x:${options.relayId}:${key}`])) ?? undefined;
    },
    async setMeta(key, value) {
      await cmd(['HSET', metaKey, `x:${options.relayId}:${key}`, value]);
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}
