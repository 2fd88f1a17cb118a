import type { Logger } from '@repo/service';
import { InvalidMessageError, createMessage, errorMessageOf, type ReplayCursor, type SubscriptionType } from '@repo/relay-protocol';
import type { Connection } from './connection';
import { seqAfter, type EventLog } from './event-log';
import type { RelayCounters } from './status';

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Replays and heals wait on the send buffer before each event, not only between pages: a page of
 * large events written at once would pass the slow-consumer bound (MAX_SEND_BUFFER_BYTES) for a
 * reader that keeps up. A promise only when there is something to wait for.
 */
async function drainedEnough(conn: Connection, highWaterBytes: number): Promise<boolean> {
  await conn.drained(highWaterBytes);
  return conn.isOpen;
}

/** Events read from the log per page. */
export const REPLAY_PAGE = 500;

/** What a replay needs. */
export interface ReplayDeps {
  log: EventLog;
  counters: RelayCounters;
  logger: Logger;
  /** Pause reading while the connection's send buffer is over this (bytes), so a replay never trips the slow-consumer bound. */
  highWaterBytes: number;
  /** The seq of the last event fanned out live (undefined before the first). */
  lastLiveSeq: () => string | undefined;
}

/**
 * Answers a `subscribe` with `since`: sends every stored event after the cursor that the
 * client wants, in storage order, then its live events, with no gap and no duplicate at the seam.
 * Events this connection was already sent live before the replay began (it was open and
 * subscribed to them) are skipped, so the documented flow (connect, then `subscribe{since}`)
 * gives each event once. Live events are held by the connection from the start (synchronously, before any await) and
 * released after the last page, less those the replay already covered (compared by seq); the
 * connection also skips any later live event at or before the replay's last seq, since a live
 * event may be delivered a moment after the replay read it from the log. An unknown or expired
 * cursor gets REPLAY_UNAVAILABLE with the oldest point available, and live events continue.
 */
export async function replayTo(
  conn: Connection,
  cursor: ReplayCursor,
  requestId: string,
  types: SubscriptionType[] | undefined,
  deps: ReplayDeps,
): Promise<void> {
  conn.holdLive();
  const through = deps.lastLiveSeq();
  let last: string | null = null;
  try {
    const start = await deps.log.locate(cursor);
    if (!start.ok) {
      const since = 'id' in cursor ? `event ${JSON.stringify(cursor.id)}` : `time ${cursor.time}`;
      conn.sendMessage(
        errorMessageOf(
          new InvalidMessageError(
            'replay unavailable',
            `${since} is not in the event log (unknown, or removed by the retention); oldest_id and oldest_timestamp give the oldest point available`,
            requestId,
            'REPLAY_UNAVAILABLE',
            { ...start.oldest },
          ),
        ),
      );
      return;
    }
    conn.sendMessage(createMessage('subscribed', { types: types ?? 'all', since: 'id' in cursor ? cursor.id : cursor.time }, requestId));
    last = start.after;
    for (;;) {
      const page = await deps.log.readAfter(last, REPLAY_PAGE);
      for (const e of page) {
        const type = e.type as SubscriptionType;
        if (!conn.wants(type) || conn.sentLive(e.seq, type, through, seqAfter)) {
          last = e.seq;
          continue;
        }
        if (conn.ws.bufferedAmount > deps.highWaterBytes && !(await drainedEnough(conn, deps.highWaterBytes))) break;
        last = e.seq;
        if (conn.send(Buffer.from(e.text))) deps.counters.events_replayed++;
      }
      if (page.length < REPLAY_PAGE || !conn.isOpen) break;
      // Let the other connections (and the live events) have the event loop between pages.
      await yieldTurn();
    }
  } catch (err) {
    deps.logger.error({ err: { message: (err as Error).message }, address: conn.address }, 'replay failed: event log unreadable');
    conn.sendMessage(
      createMessage(
        'error',
        { code: 'REPLAY_UNAVAILABLE', message: 'replay failed', details: 'the event log could not be read' },
        requestId,
      ),
    );
  } finally {
    conn.releaseHeld(last ?? undefined, seqAfter);
  }
}

/**
 * Heals a link that came back: sends the peer every event this relay stored from `sinceMs` on
 * (the time the peer last confirmed receiving our data), paced by the link's send buffer. The
 * peer drops what it already has (its log knows every id), so an overlap costs bandwidth, never
 * a duplicate to a client. Returns how many events were sent.
 */
export async function healPeer(conn: Connection, sinceMs: number, deps: ReplayDeps): Promise<number> {
  let start = await deps.log.locate({ time: sinceMs });
  if (!start.ok) {
    deps.logger.warn(
      { peer: conn.peerId, since: sinceMs },
      'healing: the log no longer holds everything since the link was lost; sending what it has',
    );
    start = { ok: true, after: null };
  }
  let last = start.after;
  let sent = 0;
  for (;;) {
    const page = await deps.log.readAfter(last, REPLAY_PAGE);
    for (const e of page) {
      if (conn.ws.bufferedAmount > deps.highWaterBytes && !(await drainedEnough(conn, deps.highWaterBytes))) break;
      last = e.seq;
      if (conn.send(Buffer.from(e.text))) sent++;
    }
    if (page.length < REPLAY_PAGE || !conn.isOpen) break;
    await yieldTurn();
  }
  deps.counters.events_healed += sent;
  return sent;
}
