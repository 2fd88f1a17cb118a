import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { startChainDouble, type ChainDouble } from '@repo/chain-double';
import { createSilentLogger, listen } from '@repo/service';
import { createNodeClient, NodeError, type NodeClient } from '../src/node-client';
import { NODE_PASSWORD, NODE_USER } from './support/helpers';

/** A node client toward `url` with the proxy's defaults. */
function clientFor(url: string): NodeClient {
  return createNodeClient({
    url: new URL(url),
    user: NODE_USER,
    password: NODE_PASSWORD,
    maxConcurrency: 16,
    queueLimit: 1024,
    timeoutMs: 5_000,
    logger: createSilentLogger(),
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
