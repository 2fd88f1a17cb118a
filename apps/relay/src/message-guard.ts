import { DEFAULT_MAX_JSON_DEPTH, jsonDepth } from '@repo/http';
import { InvalidMessageError } from '@repo/relay-protocol';

/** The limits of {@link createMessageGuard} (docs/relay.md, "WebSocket limits"). */
export interface MessageGuardLimits {
  /** Messages one client connection may send per second. */
  clientMessagesPerSecond: number;
  /** Messages the client connections of one address may send per second, together. */
  clientMessagesPerSecondPerIp: number;
}

/** What the guard knows of a connection. */
export interface GuardedSender {
  /** The client's address (without its port): the per-address budget is shared by its connections. */
  readonly ip: string;
  /** A client (no publish or mesh token): bound by the client rate limits. */
  readonly limited: boolean;
  /** The connection's own one-second window (kept on the connection). */
  rate: RateWindow;
}

/** A one-second window of messages. */
export interface RateWindow {
  start: number;
  count: number;
  /** A RATE_LIMITED error was sent in this window (one per window, so refusing costs little). */
  told: boolean;
}

/** The verdict on a message, before it is parsed. */
export type Verdict =
  | { ok: true }
  /** Dropped unread; `error` (INVALID_MESSAGE) is sent back unless undefined (once a window when rate limited). */
  | { ok: false; reason: 'rate' | 'depth'; error: InvalidMessageError | undefined };

/** Checks each message's cost before it is parsed (see {@link createMessageGuard}). */
export interface MessageGuard {
  check(sender: GuardedSender, bytes: Buffer): Verdict;
  /** A connection of `ip` opened or closed (the per-address windows are dropped with the last). */
  opened(ip: string): void;
  closed(ip: string): void;
}

/** A fresh window. */
export function newRateWindow(): RateWindow {
  return { start: 0, count: 0, told: false };
}

/** Counts one message in `w` at `now`; true while the window holds at most `max`. */
function take(w: RateWindow, now: number, max: number): boolean {
  if (now - w.start >= 1_000) {
    w.start = now;
    w.count = 0;
    w.told = false;
  }
  w.count++;
  return w.count <= max;
}

/**
 * Bounds what a message may cost before `JSON.parse` sees it (its size is bound earlier, by the
 * handshake server's `maxPayload`: MAX_CLIENT_MESSAGE_BYTES for clients): a client over
 * CLIENT_MESSAGES_PER_SECOND, or its address over CLIENT_MESSAGES_PER_SECOND_PER_IP, has the
 * message dropped unread; and JSON nested deeper than 32 levels (any sender) is refused from a
 * scan that stops at the 33rd level, so a megabyte of `[` costs 33 bytes of reading.
 */
export function createMessageGuard(limits: MessageGuardLimits): MessageGuard {
  const byIp = new Map<string, { connections: number; window: RateWindow }>();
  return {
    opened(ip) {
      const entry = byIp.get(ip);
      if (entry === undefined) byIp.set(ip, { connections: 1, window: newRateWindow() });
      else entry.connections++;
    },
    closed(ip) {
      const entry = byIp.get(ip);
      if (entry !== undefined && --entry.connections <= 0) byIp.delete(ip);
    },
    check(sender, bytes) {
      if (sender.limited) {
        const now = Date.now();
        const own = take(sender.rate, now, limits.clientMessagesPerSecond);
        const shared = byIp.get(sender.ip);
        const address = shared === undefined || take(shared.window, now, limits.clientMessagesPerSecondPerIp);
        if (!own || !address) {
          const first = !sender.rate.told;
          sender.rate.told = true;
          const error = first
            ? new InvalidMessageError(
                'message rate limit exceeded',
                `at most ${limits.clientMessagesPerSecond} messages a second per connection and ${limits.clientMessagesPerSecondPerIp} per address; messages past it are dropped`,
                undefined,
                'RATE_LIMITED',
              )
            : undefined;
          return { ok: false, reason: 'rate', error };
        }
      }
      if (jsonDepth(bytes, DEFAULT_MAX_JSON_DEPTH) > DEFAULT_MAX_JSON_DEPTH) {
        return {
          ok: false,
          reason: 'depth',
          error: new InvalidMessageError('message nested too deep', `at most ${DEFAULT_MAX_JSON_DEPTH} levels of arrays and objects`),
        };
      }
      return { ok: true };
    },
  };
}
