import Client from 'bitcoin-core';
import { rawExchange } from '@repo/http/testing';
import { basic, CLIENT_PASSWORD, CLIENT_USER, startGate, startHarness, until, type Gate, type Harness } from './support/helpers';

// docs/rpc-proxy.md, "Limits": what exceeds the calls the node can take waits in the proxy's
// queue; past it HTTP 503 with Retry-After and the JSON-RPC envelope; one address cannot fill
// the queue the others wait in; with the defaults, 400 calls at once from one client all answered.

const AUTH = `Authorization: ${basic(CLIENT_USER, CLIENT_PASSWORD)}\r\n`;
const retryAfter = (text: string) => /\r\nretry-after: ([^\r]*)/i.exec(text)?.[1];

describe('the queue toward the node', () => {
  let h: Harness;
  let gate: Gate | undefined;
  afterEach(async () => {
    gate?.release(true);
    await h.close();
    await gate?.close();
    gate = undefined;
  });

  /** A proxy whose node calls wait at a gate until the test releases them. */
  const gated = async (env: Record<string, string>) => {
    gate = await startGate();
    h = await startHarness({ BITCOIND_RPC_URL: gate.url, RPC_COALESCE: 'false', ...env });
    gate.target = h.node.url;
  };
  const getblockcount = (localAddress: string, id: number) => {
    const body = `{"jsonrpc":"1.0","id":${id},"method":"getblockcount","params":[]}`;
    return rawExchange(Number(new URL(h.url).port), `POST / HTTP/1.1\r\nHost: x\r\n${AUTH}Content-Length: ${body.length}\r\n\r\n${body}`, {
      localAddress,
      timeoutMs: 20_000,
    });
  };
  const waiting = () => h.app.node.stats.queued + h.app.node.stats.held;

  it('answers HTTP 503 with Retry-After and a -32603 envelope once the queue is full, and the calls it holds once the node answers', async () => {
    await gated({ NODE_MAX_CONCURRENCY: '1', NODE_QUEUE_LIMIT: '2' });
    const first = getblockcount('127.0.0.2', 1);
    await until(() => gate?.held === 1, 'the first call at the node', 20_000);
    const queued = [getblockcount('127.0.0.3', 2), getblockcount('127.0.0.4', 3)];
    await until(() => waiting() === 2, 'two calls waiting', 20_000);
    const refused = await getblockcount('127.0.0.5', 4);
    expect(refused.status).toBe(503);
    expect(retryAfter(refused.text)).toBe('1');
    expect(JSON.parse(refused.body)).toEqual({
      result: null,
      error: { code: -32603, message: 'proxy queue full: too many requests waiting for the node' },
      id: 4,
    });
    gate?.release(true);
    const answered = await Promise.all([first, ...queued]);
    expect(answered.map((r) => [r.status, JSON.parse(r.body).result])).toEqual([
      [200, 101],
      [200, 101],
      [200, 101],
    ]);
  });

  it('keeps room for other addresses: one address holds at most half of it, and another address is still queued and answered', async () => {
    // Per address: (NODE_MAX_CONCURRENCY + NODE_QUEUE_LIMIT) / 2 = 2 calls at the node or waiting.
    await gated({ NODE_MAX_CONCURRENCY: '1', NODE_QUEUE_LIMIT: '4' });
    const greedy = [getblockcount('127.0.0.2', 1)];
    await until(() => gate?.held === 1, 'the first call at the node', 20_000);
    greedy.push(getblockcount('127.0.0.2', 2));
    await until(() => waiting() === 1, 'the second call waiting', 20_000);
    const refused = await Promise.all([3, 4, 5].map((id) => getblockcount('127.0.0.2', id)));
    expect(refused.map((r) => [r.status, retryAfter(r.text), JSON.parse(r.body).error.message])).toEqual(
      [3, 4, 5].map(() => [503, '1', 'proxy queue full: 2 calls of this address are waiting for the node']),
    );
    const other = getblockcount('127.0.0.3', 6);
    await until(() => waiting() === 2, "the other address's call waiting", 20_000);
    gate?.release(true);
    const answered = await Promise.all([...greedy, other]);
    expect(answered.map((r) => [r.status, JSON.parse(r.body).id])).toEqual([
      [200, 1],
      [200, 2],
      [200, 6],
    ]);
  });
});

describe('many calls at once from one client (issue 66: a client Core serves is served through the proxy)', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('answers 400 concurrent calls of the npm bitcoin-core client, one connection each, with the default settings', async () => {
    h = await startHarness({});
    const client = new Client({ host: h.url, username: CLIENT_USER, password: CLIENT_PASSWORD, timeout: 60_000 });
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => client.command(i % 2 ? 'getblockcount' : 'getbestblockhash')));
    expect(results.filter((r, i) => (i % 2 ? r === 101 : /^[0-9a-f]{64}$/.test(String(r))))).toHaveLength(400);
    expect(h.app.connections.refused).toBe(0);
  }, 60_000);
});
