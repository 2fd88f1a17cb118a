import { randomUUID } from 'node:crypto';
import WebSocket, { type RawData } from 'ws';
import { backoff, type Logger } from '@repo/service';
import type { DataOf, EventDataByType, EventType, Message } from '@repo/relay-protocol';

/** `data` of a `TransactionReceived` event (the relay's message table, `@repo/relay-protocol`). */
export type TransactionReceivedData = DataOf<'TransactionReceived'>;
/** `data` of a `BlockScanned` event. */
export type BlockScannedData = DataOf<'BlockScanned'>;
/** The events the service publishes, by type (every event of the relay's message table). */
export type { EventDataByType };

/** A relay envelope `{type, id, timestamp, data}` (timestamp in ms since the epoch) of an event. */
export type EventEnvelope<T extends EventType = EventType> = Message<T>;

/** What the publisher is doing, for `/health`. */
export interface PublisherState {
  configured: boolean;
  connected: boolean;
  /** Events not yet acknowledged by the relay. */
  queued: number;
  /** Events dropped because the queue was full. */
  dropped: number;
  /** Events acknowledged by the relay. */
  acknowledged: number;
  /** Events the relay refused (an `error` answering their id): never sent again. */
  rejected: number;
}

/** Where the scanner sends its events. */
export interface Publisher {
  /** Queues one event; never throws, never blocks the scanner. Returns the envelope. */
  publish<T extends keyof EventDataByType>(type: T, data: EventDataByType[T]): EventEnvelope<T>;
  state(): PublisherState;
  /** Connects (the app's `start()`); events published before are queued. Later calls do nothing. */
  start(): void;
  /** Stops reconnecting and closes the connection; unsent events are lost. Safe before `start()`. */
  close(): Promise<void>;
}

/** A publisher that drops every event (RELAY_URL or RELAY_PUBLISH_TOKEN unset). */
export function createNoopPublisher(): Publisher {
  return {
    publish: (type, data) => ({ type, id: randomUUID(), timestamp: Date.now(), data }),
    state: () => ({ configured: false, connected: false, queued: 0, dropped: 0, acknowledged: 0, rejected: 0 }),
    start: () => undefined,
    close: async () => undefined,
  };
}

/** Options of {@link createRelayPublisher}. */
export interface RelayPublisherOptions {
  /** The relay's WebSocket URL (`ws://…` or `wss://…`). */
  url: string;
  /** Sent as `Authorization: Bearer <token>` on the upgrade request (docs/relay.md, "Publishing"). */
  token: string;
  logger: Logger;
  /** Events kept until acknowledged; past it the oldest is dropped with a warning. */
  maxQueue?: number;
  /** First reconnection delay (ms), doubled up to {@link maxBackoffMs}, with equal jitter. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/** The text of a WebSocket message, whichever form `ws` hands it in (one buffer, fragments, an ArrayBuffer). */
export function messageText(raw: RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  if (raw instanceof ArrayBuffer) return Buffer.from(raw).toString('utf8');
  return raw.toString('utf8');
}

/**
 * Publishes events to the relay (docs/relay.md, "Publishing"), once started. Every event stays queued until the relay's `ack`
 * with the same id arrives; after a reconnection the unacknowledged ones are sent again (the
 * relay de-duplicates by id), so an event survives a relay restart. The queue is bounded.
 */
export function createRelayPublisher(options: RelayPublisherOptions): Publisher {
  const { logger } = options;
  const maxQueue = options.maxQueue ?? 10_000;
  const minBackoff = options.minBackoffMs ?? 500;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  // Map order is insertion order: the first entry is the oldest.
  const queue = new Map<string, string>();
  let socket: WebSocket | undefined;
  let connected = false;
  let closed = false;
  let started = false;
  let attempts = 0;
  let dropped = 0;
  let acknowledged = 0;
  let rejected = 0;
  let lastDropWarning = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let wasConnected = false;

  function connect(): void {
    if (closed) return;
    const ws = new WebSocket(options.url, {
      headers: { Authorization: `Bearer ${options.token}` },
      handshakeTimeout: 10_000,
      maxPayload: 1024 * 1024,
    });
    socket = ws;
    ws.on('open', () => {
      connected = true;
      attempts = 0;
      if (!wasConnected) logger.info({ url: options.url, queued: queue.size }, 'connected to the relay');
      else logger.info({ url: options.url, queued: queue.size }, 'reconnected to the relay');
      wasConnected = true;
      for (const text of queue.values()) ws.send(text);
    });
    ws.on('message', (raw, isBinary) => {
      // Every relay message is one JSON text frame (docs/relay.md, "WebSocket envelope").
      if (isBinary) return;
      let message: { type?: unknown; id?: unknown; data?: { code?: unknown; message?: unknown } };
      try {
        message = JSON.parse(messageText(raw)) as typeof message;
      } catch {
        return;
      }
      if (message.type === 'ack' && typeof message.id === 'string') {
        if (queue.delete(message.id)) acknowledged++;
      } else if (message.type === 'error') {
        // The relay answers a malformed event with an error carrying its id: sending it again would fail again.
        const known = typeof message.id === 'string' && queue.delete(message.id);
        if (known) rejected++;
        logger.warn(
          { id: message.id, code: message.data?.code, message: message.data?.message, dropped: known },
          'the relay refused a message',
        );
      }
    });
    ws.on('unexpected-response', (_req, res) => {
      // 401/403: the token is wrong; keep retrying (slowly) so a fixed relay is picked up.
      logger.warn({ url: options.url, status: res.statusCode }, 'the relay refused the publisher connection');
      ws.terminate();
    });
    ws.on('error', (err) => {
      if (attempts === 0) logger.warn({ url: options.url, err: err.message }, 'relay connection error');
    });
    ws.on('close', (code) => {
      if (socket === ws) socket = undefined;
      // A close of our own (the service stopping) is not a lost connection; the relay stopping
      // (1001, as when the whole stack stops) is said as such, not as a failure.
      if (connected && !closed) {
        if (code === 1001) logger.info({ url: options.url, queued: queue.size }, 'the relay is shutting down: reconnecting');
        else logger.warn({ url: options.url, queued: queue.size, code }, 'relay connection lost: reconnecting');
      }
      connected = false;
      scheduleReconnect();
    });
  }

  function scheduleReconnect(): void {
    if (closed || reconnectTimer !== undefined) return;
    const delay = backoff(attempts, { minMs: minBackoff, maxMs: maxBackoff, jitter: 'equal' });
    attempts++;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect();
    }, delay);
    reconnectTimer.unref();
  }

  return {
    publish(type, data) {
      const envelope = { type, id: randomUUID(), timestamp: Date.now(), data } as EventEnvelope<typeof type>;
      if (closed) return envelope;
      while (queue.size >= maxQueue) {
        const oldest = queue.keys().next().value as string;
        queue.delete(oldest);
        dropped++;
        if (Date.now() - lastDropWarning > 10_000) {
          lastDropWarning = Date.now();
          logger.warn({ dropped, max: maxQueue }, 'relay event queue full: dropping the oldest events');
        }
      }
      const text = JSON.stringify(envelope);
      queue.set(envelope.id, text);
      if (connected && socket?.readyState === WebSocket.OPEN) socket.send(text);
      return envelope;
    },
    state: () => ({ configured: true, connected, queued: queue.size, dropped, acknowledged, rejected }),
    start() {
      if (started || closed) return;
      started = true;
      connect();
    },
    close() {
      if (!closed && started && queue.size > 0) {
        // The queue lives in memory: say what a stop while the relay is slow or down costs.
        logger.warn({ url: options.url, lost: queue.size }, 'publisher stopped: events not acknowledged by the relay are lost');
      }
      closed = true;
      if (reconnectTimer !== undefined) clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      const ws = socket;
      if (ws === undefined || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
      return new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else {
          ws.close(1001, 'service stopping');
          setTimeout(() => ws.terminate(), 1_000).unref();
        }
      });
    },
  };
}
