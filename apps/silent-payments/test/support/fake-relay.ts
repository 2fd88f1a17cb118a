import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { closeGracefully, listen } from '@repo/service';
import {
  InvalidMessageError,
  assertMessage,
  createErrorMessage,
  createMessage,
  errorMessageOf,
  isEventType,
  parseEnvelope,
  type Envelope,
} from '@repo/relay-protocol';

/** An event as the fake relay received it (the envelope of `@repo/relay-protocol`). */
export type ReceivedEvent = Envelope;

/** A relay stand-in (docs/relay.md, "Publishing"): checks the publish token at upgrade, acks every event. */
export interface FakeRelay {
  url: string;
  port: number;
  events: ReceivedEvent[];
  /** Upgrade attempts refused for a bad token. */
  refused: number;
  /** Connections accepted. */
  accepted: number;
  /** Stop acknowledging (events are still recorded). */
  ackEvents: boolean;
  /** Answer events of this type with an INVALID_MESSAGE error instead of an ack. */
  rejectType: string | undefined;
  /** Drops every open connection (the relay crashed). */
  dropConnections(): void;
  /** Closes every open connection with 1001 `relay shutting down`, as the relay does when it stops. */
  shutDownConnections(): void;
  close(): Promise<void>;
}

/** Starts the fake relay on `port` (0: any free port). */
export async function startFakeRelay(token: string, port = 0): Promise<FakeRelay> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(426);
    res.end();
  });
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<WebSocket>();
  const relay: FakeRelay = {
    url: '',
    port: 0,
    events: [],
    refused: 0,
    accepted: 0,
    ackEvents: true,
    rejectType: undefined,
    dropConnections() {
      for (const s of sockets) s.terminate();
    },
    shutDownConnections() {
      for (const s of sockets) s.close(1001, 'relay shutting down');
    },
    async close() {
      for (const s of sockets) s.terminate();
      wss.close();
      await closeGracefully(server, 50);
    },
  };
  server.on('upgrade', (req, socket, head) => {
    // A client that resets its connection (the publisher closing, a refused upgrade) is not an
    // error of the relay: like the real one (apps/relay), the socket's error only ends it.
    socket.on('error', () => socket.destroy());
    const expected = Buffer.from(`Bearer ${token}`);
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      relay.refused++;
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      relay.accepted++;
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.on('error', () => ws.terminate());
      ws.on('message', (raw) => {
        // Parsed and validated by the relay's own protocol package, so an event the real relay
        // would refuse is refused here too (with the same error message).
        let event: Envelope;
        try {
          event = parseEnvelope((raw as Buffer).toString('utf8'));
          if (!isEventType(event.type))
            throw new InvalidMessageError(`unknown message type: ${event.type}`, 'publishers send events', event.id);
          relay.events.push(event);
          assertMessage(event);
        } catch (err) {
          if (!(err instanceof InvalidMessageError)) throw err;
          ws.send(JSON.stringify(errorMessageOf(err)));
          return;
        }
        if (event.type === relay.rejectType) {
          ws.send(JSON.stringify(createErrorMessage('INVALID_MESSAGE', 'invalid field', '', event.id)));
        } else if (relay.ackEvents) ws.send(JSON.stringify(createMessage('ack', {}, event.id)));
      });
    });
  });
  const address = await listen(server, port, '127.0.0.1');
  relay.port = address.port;
  relay.url = `ws://127.0.0.1:${address.port}`;
  return relay;
}

/** Waits until `predicate` holds (polling), or fails after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
