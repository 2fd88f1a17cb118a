import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { startChainDouble, type ChainDouble } from '@repo/chain-double';
import { createSilentLogger, listen } from '@repo/service';
import { createNodeClient, NodeError, type NodeClient, type NodeClientOptions } from '../src/node-client';
import { sampleValue, scrape } from '@repo/metrics/testing';
import { basic, call, NODE_PASSWORD, NODE_USER, startGate, startHarness, until } from './support/helpers';

type Limits = Partial<
  Pick<NodeClientOptions, 'batchesInFlight' | 'overlapCalls' | 'overlapBatches' | 'maxConcurrency' | 'queueLimit' | 'timeoutMs'>
>;

/** A node client toward `url` with the proxy's defaults (CALL_BATCHING: 1 batch in flight, one more once 4 calls are held, 3 more at most), `limits` on top. */
function clientFor(url: string, limits: Limits = {}): NodeClient {
  return createNodeClient({
    url: new URL(url),
    user: NODE_USER,
    password: NODE_PASSWORD,
    maxConcurrency: 16,
    batchesInFlight: 1,
    overlapCalls: 4,
    overlapBatches: 3,
    queueLimit: 1024,
    timeoutMs: 5_000,
    logger: createSilentLogger(),
    ...limits,
  });
}

describe('calls gathered into one batch toward the node (docs/rpc-proxy.md, "Batching toward the node")', () => {
  let node: ChainDouble;
  let client: NodeClient;
  beforeAll(async () => {
    node = await startChainDouble({ user: NODE_USER, password: NODE_PASSWORD, initialBlocks: 101, authFailureDelayMs: 0 });
    client = clientFor(node.url);
  });
  afterAll(async () => {
    client.close();
    await node.close();
  });

  const bodies: [string, boolean][] = [
    ['{"jsonrpc":"1.0","id":1,"method":"getblockhash","params":[1]}', true],
    ['{"jsonrpc":"1.0","id":"two","method":"getblockhash","params":[100000]}', true], // -8: HTTP 500 alone
    ['{"jsonrpc":"2.0","id":3,"method":"getblockhash","params":[100000]}', false], // -8: HTTP 200 alone
    ['{"id":4,"method":"nosuchmethod","params":[]}', true], // -32601: HTTP 404 alone
    ['{"jsonrpc":"2.0","id":5,"method":"getblockcount","params":[]}', false],
    ['{"jsonrpc":"1.0","id":6,"method":"getbestblockhash","params":[]}', true],
  ];

  it('sends the calls of one turn in one HTTP request, and answers each as the node answers it alone', async () => {
    const before = { ...client.batches };
    const gathered = await Promise.all(bodies.map(([body, legacy]) => client.callBatched('/', Buffer.from(body), legacy)));
    expect(client.batches.requests - before.requests).toBe(1);
    expect(client.batches.calls - before.calls).toBe(bodies.length);
    for (const [i, reply] of gathered.entries()) {
      const alone = await client.call('/', (bodies[i] as [string, boolean])[0]);
      expect({ status: reply.status, text: reply.body.toString() }).toEqual({ status: alone.status, text: alone.body.toString() });
    }
    expect(gathered.map((r) => r.status)).toEqual([200, 500, 200, 404, 200, 200]);
  });

  it('sends a call that arrives alone as it is, at once', async () => {
    const before = { ...client.batches };
    const reply = await client.callBatched('/', Buffer.from((bodies[0] as [string, boolean])[0]), true);
    expect(reply.status).toBe(200);
    expect(client.batches).toEqual(before);
  });
});

describe('a batch reply of another shape', () => {
  let requests = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      requests++;
      // One element for two calls: not what Core answers.
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('[{"result":1,"error":null,"id":1}]\n');
    });
  });
  let client: NodeClient;
  beforeAll(async () => {
    const { port } = await listen(server, 0, '127.0.0.1');
    client = clientFor(`http://127.0.0.1:${port}`);
  });
  afterAll(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('fails each call with -32603 "node answered garbage" and never sends them again (a write may have run)', async () => {
    const calls = ['{"id":1,"method":"sendrawtransaction","params":["00"]}', '{"id":2,"method":"sendrawtransaction","params":["01"]}'];
    const outcomes = await Promise.allSettled(calls.map((b) => client.callBatched('/', Buffer.from(b), true)));
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      const err = (o as PromiseRejectedResult).reason as NodeError;
      expect(err).toBeInstanceOf(NodeError);
      expect(err.kind).toBe('garbage');
      expect(err.message).toContain('batch reply does not match');
    }
    expect(requests).toBe(1);
  });
});

describe('calls held while a batch of their path is in flight (batchesInFlight)', () => {
  /** Each request the node got (path and body), answered only when the test releases it. */
  const received: { path: string; body: string; answer: () => void }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const value = JSON.parse(body) as { id: unknown } | { id: unknown }[];
      const one = (call: { id: unknown }) => JSON.stringify({ result: `${req.url} ${String(call.id)}`, error: null, id: call.id });
      const text = Array.isArray(value) ? `[${value.map(one).join(',')}]` : one(value);
      const answer = () => {
        if (!res.headersSent && !res.destroyed) res.writeHead(200, { 'Content-Type': 'application/json' }).end(`${text}\n`);
      };
      received.push({ path: req.url ?? '', body, answer });
    });
  });
  let port = 0;
  beforeAll(async () => {
    ({ port } = await listen(server, 0, '127.0.0.1'));
  });
  afterEach(() => {
    for (const r of received.splice(0)) r.answer();
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const call = (id: number) => Buffer.from(`{"jsonrpc":"1.0","id":${id},"method":"getblockhash","params":[${id}]}`);
  const turn = () => new Promise((r) => setImmediate(r));
  async function until(count: number): Promise<void> {
    for (let i = 0; i < 500 && received.length < count; i++) await new Promise((r) => setTimeout(r, 2));
    expect(received.length).toBe(count);
  }
  const text = async (reply: Promise<{ status: number; body: Buffer }>) => {
    const r = await reply;
    return `${r.status} ${r.body.toString().trim()}`;
  };

  /** A client toward the fake node with `limits`, given to `fn` and closed after it. */
  async function withClient(limits: Limits, fn: (client: NodeClient) => Promise<void>): Promise<void> {
    const client = clientFor(`http://127.0.0.1:${port}`, limits);
    try {
      await fn(client);
    } finally {
      client.close();
      // Every request written before the close read (and then answered by afterEach), none left
      // to arrive in the next test: a call that went out with a millisecond left does reach the node.
      const open = () => new Promise<number>((r) => server.getConnections((_err, n) => r(n)));
      for (let i = 0; i < 500 && (await open()) > 0; i++) await new Promise((r) => setTimeout(r, 2));
    }
  }
  /** Call 1 sent and at the node, then (`afterMs` later) call 2 given to the client (held or sent, as the setting says). */
  async function oneOutThenAnother(client: NodeClient, afterMs = 0) {
    const first = client.callBatched('/', call(1), true);
    await until(1);
    if (afterMs > 0) await new Promise((r) => setTimeout(r, afterMs));
    const calls = [first, client.callBatched('/', call(2), true)] as const;
    // Marked handled: a test that fails before awaiting them must not end jest with an unhandled rejection.
    for (const c of calls) c.catch(() => undefined);
    return calls;
  }

  it('sends calls that arrive while a batch of their path is out in one batch when it comes back; other paths go at once', () =>
    withClient({}, async (client) => {
      const [first, second] = await oneOutThenAnother(client);
      await turn();
      const third = client.callBatched('/', call(3), true);
      const wallet = client.callBatched('/wallet/w', call(4), true);
      await until(2); // the wallet call, not held behind the other path's batch
      await new Promise((r) => setTimeout(r, 20));
      expect(received.map((r) => r.path)).toEqual(['/', '/wallet/w']);
      received[0]?.answer();
      await until(3);
      expect(received[2]?.path).toBe('/');
      expect(JSON.parse(received[2]?.body ?? '')).toEqual([JSON.parse(call(2).toString()), JSON.parse(call(3).toString())]);
      received[1]?.answer();
      received[2]?.answer();
      expect(await Promise.all([first, second, third, wallet].map(text))).toEqual([
        '200 {"result":"/ 1","error":null,"id":1}',
        '200 {"result":"/ 2","error":null,"id":2}',
        '200 {"result":"/ 3","error":null,"id":3}',
        '200 {"result":"/wallet/w 4","error":null,"id":4}',
      ]);
    }));

  it('sends held calls after a batch that failed too', () =>
    withClient({ timeoutMs: 600 }, async (client) => {
      // half its time left when the batch before it fails: each call's timer runs from its arrival
      const [first, second] = await oneOutThenAnother(client, 300);
      await expect(first).rejects.toMatchObject({ kind: 'timeout' }); // never answered
      await until(2);
      received[1]?.answer();
      expect(await text(second)).toBe('200 {"result":"/ 2","error":null,"id":2}');
    }));

  it('times a held call from its arrival: NODE_TIMEOUT_MS in all, not its wait plus its own exchange', () =>
    withClient({ timeoutMs: 1_000 }, async (client) => {
      const [first, second] = await oneOutThenAnother(client, 500);
      const arrived = performance.now(); // the second call's, give or take a microsecond
      await expect(first).rejects.toMatchObject({ kind: 'timeout' });
      await until(2); // sent when the first failed, with the half of its time it had left
      await expect(second).rejects.toMatchObject({ kind: 'timeout', message: 'node timed out after 1000 ms' });
      // its own 1,000 ms (its exchange alone would have taken it to ~1,500 ms since it arrived)
      expect(performance.now() - arrived).toBeLessThan(1_400);
    }));

  it('fails a held call at its own deadline inside the batch it went out in, and answers the later call of that batch', () =>
    withClient({ timeoutMs: 1_000 }, async (client) => {
      // call 2 held 20 ms after call 1 went out, call 3 500 ms after: when call 1 times out, 2 and 3 go together
      const [first, second] = await oneOutThenAnother(client, 20);
      await new Promise((r) => setTimeout(r, 500));
      const third = client.callBatched('/', call(3), true);
      await expect(first).rejects.toMatchObject({ kind: 'timeout' });
      await until(2);
      expect(JSON.parse(received[1]?.body ?? '')).toEqual([JSON.parse(call(2).toString()), JSON.parse(call(3).toString())]);
      // call 2 had ~20 ms left: it fails while the batch is out; the batch lives to call 3's deadline
      await expect(second).rejects.toMatchObject({ kind: 'timeout' });
      received[1]?.answer();
      expect(await text(third)).toBe('200 {"result":"/ 3","error":null,"id":3}');
      expect(client.stats).toMatchObject({ active: 0, held: 0 });
    }));

  it('times a call queued for a connection from its arrival: three calls behind one slot all fail at NODE_TIMEOUT_MS', () =>
    withClient({ timeoutMs: 1_000, maxConcurrency: 1 }, async (client) => {
      const started = performance.now();
      const calls = [1, 2, 3].map((id) => client.call('/', call(id)));
      for (const c of calls) c.catch(() => undefined);
      const ended: number[] = [];
      for (const c of calls) {
        await expect(c).rejects.toMatchObject({ kind: 'timeout' });
        ended.push(performance.now() - started);
      }
      // one after the other, each with a timer of its own, they would end at ~1, 2 and 3 s
      expect(Math.max(...ended)).toBeLessThan(1_500);
      expect(client.stats).toMatchObject({ active: 0, queued: 0 });
    }));

  it('counts held calls as waiting: past NODE_QUEUE_LIMIT, a held call and a queued one both fail at once', () =>
    withClient({ maxConcurrency: 1, queueLimit: 1 }, async (client) => {
      const [first, second] = await oneOutThenAnother(client); // the one slot busy, call 2 held: the queue is full
      await expect(client.callBatched('/', call(3), true)).rejects.toMatchObject({
        kind: 'queue',
        message: expect.stringContaining('queue full'),
      });
      await expect(client.call('/', call(4))).rejects.toMatchObject({ kind: 'queue' });
      received[0]?.answer();
      await until(2);
      received[1]?.answer();
      expect(await Promise.all([first, second].map(text))).toEqual([
        '200 {"result":"/ 1","error":null,"id":1}',
        '200 {"result":"/ 2","error":null,"id":2}',
      ]);
      expect(received).toHaveLength(2); // calls 3 and 4 never reached the node
    }));

  /** The bodies of the calls `ids`, as one batch. */
  const batchOf = (...ids: number[]) => ids.map((id) => JSON.parse(call(id).toString()) as unknown);
  /** `ids` given to the client, in one turn each; their replies, marked handled. */
  function more(client: NodeClient, ...ids: number[]) {
    return ids.map((id) => {
      const reply = client.callBatched('/', call(id), true);
      reply.catch(() => undefined);
      return reply;
    });
  }

  it('sends the calls held behind a batch as one batch more once overlapCalls of them wait, and no third with overlapBatches=1', () =>
    withClient({ overlapCalls: 3, overlapBatches: 1 }, async (client) => {
      const [first, second] = await oneOutThenAnother(client);
      const held = more(client, 3);
      await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(1); // two held: fewer than 3
      expect(client.stats.held).toBe(2);
      const fourth = more(client, 4);
      await until(2); // the third held call: the three go while the first batch is out
      expect(JSON.parse(received[1]?.body ?? '')).toEqual(batchOf(2, 3, 4));
      expect(client.stats.held).toBe(0);
      const later = more(client, 5, 6, 7, 8);
      await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(2); // two out: one beyond batchesInFlight at most
      expect(client.stats.held).toBe(4);
      received[0]?.answer();
      await until(3);
      expect(JSON.parse(received[2]?.body ?? '')).toEqual(batchOf(5, 6, 7, 8));
      received[1]?.answer();
      received[2]?.answer();
      expect(await Promise.all([first, second, ...held, ...fourth, ...later].map(text))).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8].map((id) => `200 {"result":"/ ${id}","error":null,"id":${id}}`),
      );
      expect(client.stats).toMatchObject({ active: 0, held: 0 });
    }));

  it('sends up to overlapBatches batches more, each once overlapCalls calls wait, and holds the rest', () =>
    withClient({ overlapCalls: 3, overlapBatches: 2 }, async (client) => {
      const [first, second] = await oneOutThenAnother(client);
      const held = more(client, 3, 4);
      await until(2); // three held: they go while the first batch is out
      expect(JSON.parse(received[1]?.body ?? '')).toEqual(batchOf(2, 3, 4));
      const next = more(client, 5, 6);
      await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(2); // two held: fewer than 3
      const third = more(client, 7);
      await until(3); // the third batch while two are out: two beyond batchesInFlight
      expect(JSON.parse(received[2]?.body ?? '')).toEqual(batchOf(5, 6, 7));
      const later = more(client, 8, 9, 10, 11);
      await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(3); // three out: no fourth
      expect(client.stats.held).toBe(4);
      received[1]?.answer();
      await until(4); // one came back: the four held go
      expect(JSON.parse(received[3]?.body ?? '')).toEqual(batchOf(8, 9, 10, 11));
      for (const r of [received[0], received[2], received[3]]) r?.answer();
      expect(await Promise.all([first, second, ...held, ...next, ...third, ...later].map(text))).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((id) => `200 {"result":"/ ${id}","error":null,"id":${id}}`),
      );
      expect(client.stats).toMatchObject({ active: 0, held: 0 });
    }));

  it('sends no more batches than the bound and the batches beyond it, however many calls arrive in a turn', () =>
    withClient({ overlapCalls: 3, overlapBatches: 1 }, async (client) => {
      const ids = Array.from({ length: 70 }, (_, i) => i + 1);
      const replies = more(client, ...ids);
      await until(2); // 32 within batchesInFlight, 32 as the one batch beyond it
      await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(2); // not a third for the six left
      expect(JSON.parse(received[0]?.body ?? '')).toEqual(batchOf(...ids.slice(0, 32)));
      expect(JSON.parse(received[1]?.body ?? '')).toEqual(batchOf(...ids.slice(32, 64)));
      expect(client.stats.held).toBe(6); // they wait as held calls, counted toward NODE_QUEUE_LIMIT
      received[0]?.answer();
      await until(3);
      expect(JSON.parse(received[2]?.body ?? '')).toEqual(batchOf(...ids.slice(64)));
      expect(client.stats.held).toBe(0);
      received[1]?.answer();
      received[2]?.answer();
      expect(await Promise.all(replies.map(text))).toEqual(ids.map((id) => `200 {"result":"/ ${id}","error":null,"id":${id}}`));
      expect(client.stats).toMatchObject({ active: 0, held: 0 });
    }));

  it('with overlapCalls=0, holds every call behind the batch out', () =>
    withClient({ overlapCalls: 0 }, async (client) => {
      const [first, second] = await oneOutThenAnother(client);
      const held = more(client, 3, 4, 5, 6, 7, 8, 9, 10);
      await new Promise((r) => setTimeout(r, 20));
      expect(received).toHaveLength(1);
      expect(client.stats.held).toBe(9);
      received[0]?.answer();
      await until(2);
      expect(JSON.parse(received[1]?.body ?? '')).toEqual(batchOf(2, 3, 4, 5, 6, 7, 8, 9, 10));
      received[1]?.answer();
      expect(await Promise.all([first, second, ...held].map(text))).toHaveLength(10);
    }));

  it('with 0 (no bound), sends the calls of each turn at once', () =>
    withClient({ batchesInFlight: 0 }, async (client) => {
      const [first, second] = await oneOutThenAnother(client);
      await until(2);
      for (const r of received) r.answer();
      expect(await Promise.all([first, second].map(text))).toEqual([
        '200 {"result":"/ 1","error":null,"id":1}',
        '200 {"result":"/ 2","error":null,"id":2}',
      ]);
    }));
});

describe('through the proxy, with its defaults (batchesInFlight 1, overlapCalls 4, overlapBatches 3)', () => {
  it('holds the calls that arrive while a batch is out at the node, shows them waiting in /metrics, and sends them in the next batch', async () => {
    const gate = await startGate();
    const h = await startHarness({ BITCOIND_RPC_URL: gate.url });
    gate.target = h.node.url;
    try {
      const expected = await Promise.all(
        [1, 2, 3].map(async (n) => (await call(h.node.url, 'getblockhash', [n], { auth: basic(NODE_USER, NODE_PASSWORD) })).text),
      );
      const first = call(h.url, 'getblockhash', [1]);
      await until(() => gate.held === 1);
      const later = [2, 3].map((n) => call(h.url, 'getblockhash', [n]));
      await until(() => h.app.node.stats.held === 2);
      expect(sampleValue(await scrape(`${h.url}/metrics`), 'rpc_proxy_node_queue')).toBe(2);
      expect(gate.received).toBe(1); // held at the proxy, not sent
      const before = { ...h.app.node.batches };
      gate.release(true);
      expect((await Promise.all([first, ...later])).map((r) => r.text)).toEqual(expected);
      expect(gate.received).toBe(2); // the two held calls in one request
      expect(h.app.node.batches).toEqual({ requests: before.requests + 1, calls: before.calls + 2 });
      expect(h.app.node.stats.held).toBe(0);
    } finally {
      await h.close();
      await gate.close();
    }
  });

  it('sends four held calls as one batch more while the first is out, four more as a third and a fourth, and holds the next until one comes back', async () => {
    const gate = await startGate();
    const h = await startHarness({ BITCOIND_RPC_URL: gate.url });
    gate.target = h.node.url;
    const heights = Array.from({ length: 14 }, (_, i) => i + 1);
    try {
      const expected = await Promise.all(
        heights.map(async (n) => (await call(h.node.url, 'getblockhash', [n], { auth: basic(NODE_USER, NODE_PASSWORD) })).text),
      );
      const first = call(h.url, 'getblockhash', [1]);
      await until(() => gate.held === 1);
      const overlapping: Promise<{ text: string }>[] = [];
      for (const out of [2, 3, 4]) {
        const start = 2 + 4 * (out - 2);
        overlapping.push(...heights.slice(start - 1, start + 3).map((n) => call(h.url, 'getblockhash', [n])));
        // Four held calls go as one request while the batches before are out: up to three beyond batchesInFlight.
        await until(() => gate.held === out);
      }
      expect(h.app.node.stats.held).toBe(0);
      const last = call(h.url, 'getblockhash', [14]);
      await until(() => h.app.node.stats.held === 1);
      expect(gate.received).toBe(4); // four out: no fifth
      const before = { ...h.app.node.batches };
      gate.release(true);
      expect((await Promise.all([first, ...overlapping, last])).map((r) => r.text)).toEqual(expected);
      expect(gate.received).toBe(5);
      expect(h.app.node.batches).toEqual({ requests: before.requests + 3, calls: before.calls + 12 });
    } finally {
      await h.close();
      await gate.close();
    }
  });
});
