import { openConnection } from '@repo/http/testing';
import { getJson, postJson, removeTempDirs, startRelay, type TestRelay } from './support/helpers';

describe('relay HTTP', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ RELAY_ID: 'relay-http-test', MAX_BODY_BYTES: '2048' });
  });
  afterAll(async () => {
    await relay.close();
    removeTempDirs();
  });

  describe('GET /health', () => {
    it('answers the health record', async () => {
      const { status, body } = await getJson(`${relay.httpUrl}/health`);
      expect(status).toBe(200);
      expect(body).toEqual({
        status: 'healthy',
        relay_id: 'relay-http-test',
        uptime: expect.any(Number),
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        connected_relays: 0,
      });
    });
  });

  describe('GET /status', () => {
    it('answers the status record with sync_metrics', async () => {
      const { status, body } = await getJson(`${relay.httpUrl}/status`);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        relay_id: 'relay-http-test',
        status: 'running',
        uptime: expect.any(Number),
        version: expect.any(String),
        connected_relays: 0,
        last_block_height: 0,
        sync_metrics: { messages_sent: expect.any(Number), messages_received: expect.any(Number), sync_errors: 0 },
      });
    });
  });

  describe('GET /metrics', () => {
    it('answers the metrics record', async () => {
      const { status, body } = await getJson(`${relay.httpUrl}/metrics`);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        messages_sent: expect.any(Number),
        messages_received: expect.any(Number),
        sync_errors: 0,
        last_sync_timestamp: 0,
        connected_relays: 0,
        mesh_health: 1,
      });
      for (const key of ['messages_sent', 'messages_received', 'sync_errors', 'last_sync_timestamp', 'connected_relays'])
        expect(Number.isInteger(body[key])).toBe(true);
    });
  });

  describe('GET /relays', () => {
    it('answers an empty list without peers', async () => {
      const { status, body } = await getJson(`${relay.httpUrl}/relays`);
      expect(status).toBe(200);
      expect(body).toEqual({ relays: [] });
    });
  });

  describe('POST /sync', () => {
    it.each([
      ['a missing sync_type', { target_relay: 'all' }, 'missing required parameter: sync_type'],
      ['an unknown sync_type', { sync_type: 'EverythingSync', target_relay: 'all' }, 'unknown sync_type'],
      ['a numeric sync_type', { sync_type: 3, target_relay: 'all' }, 'unknown sync_type'],
      ['a missing target_relay', { sync_type: 'StateSync' }, 'missing required parameter: target_relay'],
      ['a numeric target_relay', { sync_type: 'StateSync', target_relay: 5 }, 'invalid parameter: target_relay'],
      ['a JSON array', [1], 'expected a JSON object body'],
    ])('answers 400 INVALID_REQUEST to %s', async (_name, body, message) => {
      const res = await postJson(`${relay.httpUrl}/sync`, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { code: 'INVALID_REQUEST', message, details: expect.any(String) } });
    });

    it('answers 400 INVALID_REQUEST to malformed JSON', async () => {
      const res = await postJson(`${relay.httpUrl}/sync`, '{"sync_type":');
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', message: 'malformed JSON body' });
    });

    it('answers 413 to a body over the limit', async () => {
      const res = await postJson(`${relay.httpUrl}/sync`, { sync_type: 'StateSync', target_relay: 'all', pad: 'x'.repeat(4096) });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    });
  });

  it('answers 404 in the nested error shape for an unknown path', async () => {
    const res = await getJson(`${relay.httpUrl}/nope`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: 'no such endpoint: GET /nope' } });
  });
});

describe('relay HTTP limits', () => {
  it('answers 429 RATE_LIMITED past RATE_LIMIT_PER_MINUTE', async () => {
    const relay = await startRelay({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await getJson(`${relay.httpUrl}/health`)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const res = await getJson(`${relay.httpUrl}/health`);
      expect(res.body.error.code).toBe('RATE_LIMITED');
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await relay.close();
      removeTempDirs();
    }
  });

  it('closes an HTTP connection past MAX_HTTP_CONNECTIONS and serves again once one ends', async () => {
    const relay = await startRelay({ MAX_HTTP_CONNECTIONS: '2' });
    const port = Number(new URL(relay.httpUrl).port);
    // Three addresses (one address alone would meet its own share first: a tenth of the cap is kept for new addresses).
    const opened = [
      await openConnection(port, 100, '127.0.0.2'),
      await openConnection(port, 100, '127.0.0.3'),
      await openConnection(port, 100, '127.0.0.4'),
    ];
    try {
      expect(opened.map((o) => o.closedAtOnce)).toEqual([false, false, true]);
      opened[0]!.socket.destroy();
      await new Promise((r) => setTimeout(r, 50));
      expect((await getJson(`${relay.httpUrl}/health`)).status).toBe(200);
    } finally {
      for (const o of opened) o.socket.destroy();
      await relay.close();
      removeTempDirs();
    }
  });
});
