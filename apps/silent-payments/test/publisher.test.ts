import { createMemoryLogger, createSilentLogger } from '@repo/service';
import { createNoopPublisher, createRelayPublisher, messageText, type Publisher, type RelayPublisherOptions } from '../src/publisher';
import { freePort } from '@repo/regtest';
import { startFakeRelay, waitFor, type FakeRelay } from './support/fake-relay';

const TOKEN = 'publish-token-for-tests';
const logger = createSilentLogger();
const block = (h: number) => ({ block_height: h, block_hash: 'ab'.repeat(32), transactions_count: 1, silent_payments_found: 0 });
/** A relay publisher, started (connecting); its log lines go to `log` when given. */
const started = (options: Omit<RelayPublisherOptions, 'logger'>, log = logger): Publisher => {
  const publisher = createRelayPublisher({ ...options, logger: log });
  publisher.start();
  return publisher;
};

describe('createRelayPublisher', () => {
  let relay: FakeRelay | undefined;
  let publisher: Publisher | undefined;

  /** A publisher connected to a fresh fake relay, its lines from info up kept in memory (both closed after the test). */
  async function connectedWithLog(): Promise<{ memory: ReturnType<typeof createMemoryLogger>; relay: FakeRelay; publisher: Publisher }> {
    const memory = createMemoryLogger('info');
    const fake = await startFakeRelay(TOKEN);
    const connected = started({ url: fake.url, token: TOKEN, minBackoffMs: 20, maxBackoffMs: 100 }, memory.logger);
    [relay, publisher] = [fake, connected];
    await waitFor(() => connected.state().connected, 5_000, 'connected');
    return { memory, relay: fake, publisher: connected };
  }
  afterEach(async () => {
    await publisher?.close();
    await relay?.close();
    publisher = undefined;
    relay = undefined;
  });

  it('connects only once started: events published before wait in the queue; close() before start() is safe', async () => {
    relay = await startFakeRelay(TOKEN);
    publisher = createRelayPublisher({ url: relay.url, token: TOKEN, logger });
    publisher.publish('BlockScanned', block(1));
    await new Promise((r) => setTimeout(r, 100));
    expect(relay.accepted).toBe(0);
    expect(publisher.state()).toMatchObject({ connected: false, queued: 1 });
    publisher.start();
    publisher.start();
    await waitFor(() => publisher!.state().acknowledged === 1, 5_000, 'ack');
    expect(relay.accepted).toBe(1);
    const never = createRelayPublisher({ url: relay.url, token: TOKEN, logger });
    await never.close();
    never.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(relay.accepted).toBe(1);
  });

  it('publishes envelopes with the bearer token and forgets them once acknowledged', async () => {
    relay = await startFakeRelay(TOKEN);
    publisher = started({ url: relay.url, token: TOKEN });
    const sent = publisher.publish('TransactionReceived', {
      txid: 'cd'.repeat(32),
      amount: 0.5,
      address: 'tsp1x',
      block_height: 7,
      confirmations: 1,
    });
    await waitFor(() => publisher!.state().acknowledged === 1, 5_000, 'ack');
    expect(relay.events).toEqual([{ type: 'TransactionReceived', id: sent.id, timestamp: sent.timestamp, data: sent.data }]);
    expect(sent.timestamp).toBeGreaterThan(1_600_000_000_000);
    expect(publisher.state()).toMatchObject({ configured: true, connected: true, queued: 0 });
  });

  it('keeps events while the relay is down and delivers them once it is up', async () => {
    const port = await freePort();
    publisher = started({ url: `ws://127.0.0.1:${port}`, token: TOKEN, minBackoffMs: 20, maxBackoffMs: 100 });
    publisher.publish('BlockScanned', block(1));
    publisher.publish('BlockScanned', block(2));
    await new Promise((r) => setTimeout(r, 100));
    expect(publisher.state()).toMatchObject({ connected: false, queued: 2 });
    relay = await startFakeRelay(TOKEN, port);
    await waitFor(() => publisher!.state().queued === 0, 5_000, 'delivery');
    expect(relay.events.map((e) => e.data.block_height)).toEqual([1, 2]);
  });

  it('sends unacknowledged events again after the connection drops', async () => {
    relay = await startFakeRelay(TOKEN);
    relay.ackEvents = false;
    publisher = started({ url: relay.url, token: TOKEN, minBackoffMs: 20, maxBackoffMs: 100 });
    const sent = publisher.publish('BlockScanned', block(3));
    await waitFor(() => relay!.events.length === 1, 5_000, 'first delivery');
    relay.ackEvents = true;
    relay.dropConnections();
    await waitFor(() => publisher!.state().acknowledged === 1, 5_000, 'redelivery');
    expect(relay.events.map((e) => e.id)).toEqual([sent.id, sent.id]);
  });

  it('logs the reconnection after a lost connection, and a stop as a stop (not "reconnecting"), with the events it loses', async () => {
    const { memory, relay, publisher } = await connectedWithLog();
    relay.dropConnections();
    await waitFor(() => memory.lines.some((l) => l.msg === 'relay connection lost: reconnecting'), 5_000, 'lost');
    // The close code says how it was lost (1006: no close frame, the connection cut).
    expect(memory.lines.find((l) => l.msg === 'relay connection lost: reconnecting')).toMatchObject({ level: 40, code: 1006 });
    await waitFor(() => memory.lines.some((l) => l.msg === 'reconnected to the relay'), 5_000, 'reconnected line');
    relay.ackEvents = false;
    publisher.publish('BlockScanned', block(4));
    await waitFor(() => relay.events.length === 1, 5_000, 'delivery');
    const before = memory.lines.length;
    await publisher.close();
    const atClose = memory.lines.slice(before).map((l) => l.msg);
    expect(atClose).not.toContain('relay connection lost: reconnecting');
    expect(memory.lines.slice(before)).toEqual([
      expect.objectContaining({ level: 40, msg: 'publisher stopped: events not acknowledged by the relay are lost', lost: 1 }),
    ]);
  });

  it('logs a relay that shuts down (1001) as information, not as a lost connection, and reconnects', async () => {
    const { memory, relay } = await connectedWithLog();
    relay.shutDownConnections();
    await waitFor(() => memory.lines.some((l) => l.msg === 'reconnected to the relay'), 5_000, 'reconnected line');
    expect(memory.lines.filter((l) => l.level >= 40)).toEqual([]);
    expect(memory.lines).toContainEqual(expect.objectContaining({ level: 30, msg: 'the relay is shutting down: reconnecting', queued: 0 }));
  });

  it('forgets an event the relay refuses with an error', async () => {
    relay = await startFakeRelay(TOKEN);
    relay.rejectType = 'TransactionReceived';
    publisher = started({ url: relay.url, token: TOKEN });
    publisher.publish('TransactionReceived', { txid: 'ab'.repeat(32), amount: 1, address: 'tsp1x', block_height: 1, confirmations: 1 });
    publisher.publish('BlockScanned', block(1));
    await waitFor(() => publisher!.state().queued === 0, 5_000, 'answers');
    expect(publisher.state()).toMatchObject({ rejected: 1, acknowledged: 1 });
  });

  it('drops the oldest events when the queue is full', async () => {
    const port = await freePort();
    publisher = started({
      url: `ws://127.0.0.1:${port}`,
      token: TOKEN,
      maxQueue: 2,
      minBackoffMs: 20,
      maxBackoffMs: 50,
    });
    for (let h = 1; h <= 5; h++) publisher.publish('BlockScanned', block(h));
    expect(publisher.state()).toMatchObject({ queued: 2, dropped: 3 });
    relay = await startFakeRelay(TOKEN, port);
    await waitFor(() => publisher!.state().queued === 0, 5_000, 'delivery');
    expect(relay.events.map((e) => e.data.block_height)).toEqual([4, 5]);
  });

  it('is refused with a wrong token and keeps its events', async () => {
    relay = await startFakeRelay(TOKEN);
    publisher = started({ url: relay.url, token: 'wrong', minBackoffMs: 20, maxBackoffMs: 50 });
    publisher.publish('BlockScanned', block(1));
    await waitFor(() => relay!.refused >= 2, 5_000, 'refusals');
    expect(relay.events).toEqual([]);
    expect(publisher.state()).toMatchObject({ connected: false, queued: 1 });
  });
});

describe('messageText', () => {
  it('decodes each form ws hands a message in: a Buffer, fragments, an ArrayBuffer', () => {
    const text = '{"type":"ack","id":"é"}';
    const bytes = Buffer.from(text, 'utf8');
    expect(messageText(bytes)).toBe(text);
    // A fragment boundary inside the two bytes of "é".
    expect(messageText([bytes.subarray(0, 20), bytes.subarray(20)])).toBe(text);
    expect(messageText(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))).toBe(text);
  });
});

describe('createNoopPublisher', () => {
  it('accepts events and reports itself unconfigured', async () => {
    const publisher = createNoopPublisher();
    expect(publisher.publish('BlockScanned', block(1)).type).toBe('BlockScanned');
    expect(publisher.state()).toEqual({ configured: false, connected: false, queued: 0, dropped: 0, acknowledged: 0, rejected: 0 });
    await publisher.close();
  });
});
