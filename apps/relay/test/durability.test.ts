import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createSilentLogger, listen } from '@repo/service';
import { DEFAULT_LIMITS, DEFAULT_TIMING } from '../src/config';
import { createSqliteLog, type Appended, type EventLog } from '../src/event-log';
import { createRelay, type Relay } from '../src/relay';
import { PUBLISH_TOKEN, MESH_TOKEN, type TestClient, blockEvent, connect, removeTempDirs, tempDir } from './support/helpers';

/** A relay on a real socket over `log`. */
async function relayOver(log: EventLog): Promise<{ relay: Relay; server: Server; url: string }> {
  const relay = createRelay({
    relayId: 'relay-durable',
    version: '1.0.0',
    publishToken: PUBLISH_TOKEN,
    meshToken: MESH_TOKEN,
    peers: [],
    eventLog: log,
    paymentsPublic: true,
    limits: DEFAULT_LIMITS,
    timing: DEFAULT_TIMING,
    logger: createSilentLogger(),
  });
  const server = createServer();
  relay.attach(server);
  const { port } = await listen(server, 0, '127.0.0.1');
  relay.start();
  return { relay, server, url: `ws://127.0.0.1:${port}` };
}

describe('acknowledgement and durability', () => {
  const clients: TestClient[] = [];
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await stop?.();
    stop = undefined;
    removeTempDirs();
  });

  it('acknowledges an event only once the log says it is on disk (delivery does not wait)', async () => {
    const log = createSqliteLog({ file: join(tempDir(), 'events.db'), retention: { maxAgeMs: 60_000, maxEvents: 100 } });
    let release!: () => void;
    const disk = new Promise<void>((resolve) => (release = resolve));
    const held: EventLog = {
      ...log,
      kind: log.kind,
      append: async (e): Promise<Appended> => ({ ...(await log.append(e)), durable: disk }),
    };
    const { relay, server, url } = await relayOver(held);
    stop = async () => {
      await relay.close();
      server.close();
    };
    const subscriber = await connect(url);
    const pub = await connect(url, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    clients.push(subscriber, pub);
    const event = blockEvent();
    pub.send(event);
    await subscriber.next((m) => m.id === event.id);
    await pub.request('ping');
    expect(pub.ofType('ack')).toEqual([]);
    release();
    expect(await pub.next((m) => m.type === 'ack')).toMatchObject({ id: event.id });
  });

  it('does not acknowledge an event the log could not store, and closes the publisher (1011) so it sends it again', async () => {
    const log = createSqliteLog({ file: join(tempDir(), 'events.db'), retention: { maxAgeMs: 60_000, maxEvents: 100 } });
    const failing: EventLog = { ...log, kind: log.kind, append: () => Promise.reject(new Error('disk full')) };
    const { relay, server, url } = await relayOver(failing);
    stop = async () => {
      await relay.close();
      server.close();
    };
    const subscriber = await connect(url);
    const pub = await connect(url, { headers: { Authorization: `Bearer ${PUBLISH_TOKEN}` } });
    clients.push(subscriber, pub);
    pub.send(blockEvent());
    await pub.closed;
    expect([pub.closeCode, pub.closeReason]).toEqual([1011, 'event log unavailable']);
    expect(pub.ofType('ack')).toEqual([]);
    expect(subscriber.ofType('BlockScanned')).toEqual([]);
  });
});
