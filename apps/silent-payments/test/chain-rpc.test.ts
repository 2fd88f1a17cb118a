import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcError } from '@repo/errors';
import { closeGracefully, listen } from '@repo/service';
import { ChainRpcError, createChainRpcClient } from '../src/chain-rpc';

type Handler = (body: unknown, req: IncomingMessage, res: ServerResponse) => void;

describe('createChainRpcClient', () => {
  let server: Server;
  let url: string;
  let handler: Handler;
  let dir: string;
  const seen: Array<{ auth: string | undefined; body: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
        seen.push({ auth: req.headers.authorization, body });
        handler(body, req, res);
      });
    });
    const { port } = await listen(server, 0, '127.0.0.1');
    url = `http://127.0.0.1:${port}`;
    dir = mkdtempSync(join(tmpdir(), 'sp-rpc-'));
  });
  afterAll(async () => {
    await closeGracefully(server, 100);
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

  it('sends a JSON-RPC 2.0 envelope with basic auth and returns the result', async () => {
    handler = (body, _req, res) => reply(res, 200, { result: 42, error: null, id: (body as { id: string }).id });
    const client = createChainRpcClient({ url, user: 'proxytest', password: 'proxytestpass' });
    await expect(client.call('getblockcount')).resolves.toBe(42);
    expect(seen[0]?.auth).toBe('Basic cHJveHl0ZXN0OnByb3h5dGVzdHBhc3M=');
    expect(seen[0]?.body).toMatchObject({ jsonrpc: '2.0', method: 'getblockcount', params: [] });
    client.close();
  });

  it('authenticates with the cookie file and re-reads it after a 401', async () => {
    const cookieFile = join(dir, '.cookie');
    writeFileSync(cookieFile, '__cookie__:first');
    let accepted = 'Basic ' + Buffer.from('__cookie__:first').toString('base64');
    handler = (body, req, res) => {
      if (req.headers.authorization !== accepted) reply(res, 401, '');
      else reply(res, 200, { result: 'ok', error: null, id: (body as { id: string }).id });
    };
    const client = createChainRpcClient({ url, cookieFile });
    await expect(client.call('getbestblockhash')).resolves.toBe('ok');
    writeFileSync(cookieFile, '__cookie__:second');
    accepted = 'Basic ' + Buffer.from('__cookie__:second').toString('base64');
    await expect(client.call('getbestblockhash')).resolves.toBe('ok');
    client.close();
  });

  it('names the cookie file and its errno when it cannot be read and the node refuses the call', async () => {
    handler = (_body, _req, res) => reply(res, 401, '');
    const cookieFile = join(dir, 'no-such-dir', '.cookie');
    const client = createChainRpcClient({ url, cookieFile });
    const err = await client.call('getblockcount').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'http', status: 401 });
    expect((err as Error).message).toBe(
      `chain node answered HTTP 401: scanner cannot read the node's cookie file ${cookieFile} (ENOENT): the node refused the call without it (HTTP 401)`,
    );
    expect(seen[0]?.auth).toBeUndefined();
    client.close();
  });

  it('reads a JSON-RPC 2.0 error answered with HTTP 200 as Bitcoin Core 29 sends it', async () => {
    handler = (body, _req, res) =>
      reply(res, 200, { jsonrpc: '2.0', error: { code: -5, message: 'Block not found' }, id: (body as { id: string }).id });
    const client = createChainRpcClient({ url });
    await expect(client.call('getblock', ['00'])).rejects.toMatchObject({ kind: 'rpc', rpcCode: -5, message: 'getblock: Block not found' });
    client.close();
  });

  it('reads an answer with a reading: its bytes first, else the checked result parsed, and its failures as every call', async () => {
    const reads: string[] = [];
    // a reader that takes answers whose result is a string, and leaves the others to parse
    const reading = {
      read(body: Uint8Array, id: string) {
        const envelope = JSON.parse(Buffer.from(body).toString()) as { result?: unknown; id?: string };
        reads.push(id);
        return envelope.id === id && typeof envelope.result === 'string' ? `read ${envelope.result}` : undefined;
      },
      parse: (result: unknown) => `parsed ${JSON.stringify(result)}`,
    };
    let answer: (id: string) => unknown = (id) => ({ jsonrpc: '2.0', result: 'block', id });
    let status = 200;
    handler = (body, _req, res) => reply(res, status, answer((body as { id: string }).id));
    const client = createChainRpcClient({ url });
    await expect(client.call('getblock', ['00', 3], reading)).resolves.toBe('read block');
    answer = (id) => ({ jsonrpc: '2.0', result: { height: 1 }, id });
    await expect(client.call('getblock', ['00', 3], reading)).resolves.toBe('parsed {"height":1}');
    expect(reads).toEqual([(seen[0]!.body as { id: string }).id, (seen[1]!.body as { id: string }).id]);
    answer = (id) => ({ jsonrpc: '2.0', error: { code: -5, message: 'Block not found' }, id });
    await expect(client.call('getblock', ['00', 3], reading)).rejects.toMatchObject({
      kind: 'rpc',
      rpcCode: -5,
      message: 'getblock: Block not found',
    });
    answer = () => '<html>busy</html>';
    status = 503;
    await expect(client.call('getblock', ['00', 3], reading)).rejects.toMatchObject({ kind: 'http', status: 503 });
    expect(reads).toHaveLength(3); // a 503's body is not read
    status = 200;
    answer = (id) => ({ jsonrpc: '2.0', result: 'x', id: `${id}-other` });
    await expect(client.call('getblock', ['00', 3], reading)).rejects.toMatchObject({
      kind: 'rpc',
      message: expect.stringContaining('missing from the answer') as string,
    });
    client.close();
    const refused = createChainRpcClient({ url: 'http://127.0.0.1:1' });
    await expect(refused.call('getblock', ['00', 3], reading)).rejects.toMatchObject({ kind: 'unreachable' });
    refused.close();
  });

  it('turns a JSON-RPC error into a ChainRpcError with its code', async () => {
    handler = (body, _req, res) =>
      reply(res, 500, { result: null, error: { code: -8, message: 'Block height out of range' }, id: (body as { id: string }).id });
    const client = createChainRpcClient({ url });
    await expect(client.call('getblockhash', [999])).rejects.toMatchObject({ kind: 'rpc', rpcCode: -8 });
    client.close();
  });

  it.each([
    ['a 401 with an empty body', 401, '', 'http'],
    ['a 503 busy answer', 503, 'Work queue depth exceeded', 'http'],
    ['garbage', 200, '<html>', 'garbage'],
  ])('fails clearly on %s', async (_name, status, body, kind) => {
    handler = (_body, _req, res) => {
      res.writeHead(status);
      res.end(body);
    };
    const client = createChainRpcClient({ url, user: 'someone', password: 'pw-s3cret' });
    const err = await client.call('getblockcount').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChainRpcError);
    expect(err).toMatchObject({ kind });
    expect((err as Error).message).not.toContain('pw-s3cret');
    client.close();
  });

  it("keeps the rpc-proxy's message of an error answered with id null (its rate limit, 429)", async () => {
    // The rpc-proxy refuses a request before reading it (rate limit, body limit) with id null, as
    // JSON-RPC asks when the id is unknown: the reason must reach the log and /ready, not "missing".
    handler = (_body, _req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '60' });
      res.end('{"result":null,"error":{"code":-32603,"message":"rate limit exceeded: retry after 60 s"},"id":null}');
    };
    const client = createChainRpcClient({ url });
    const err = await client.call('getblockchaininfo').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChainRpcError);
    expect(err).toMatchObject({ kind: 'rpc', rpcCode: -32603, message: 'getblockchaininfo: rate limit exceeded: retry after 60 s' });
    const batchErr = await client.batch([{ method: 'getblockhash', params: [1] }]).catch((e: unknown) => e);
    expect(batchErr).toMatchObject({ kind: 'rpc', rpcCode: -32603, message: 'batch: rate limit exceeded: retry after 60 s' });
    client.close();
  });

  it('fails with unreachable when nothing listens, and on a timeout', async () => {
    const closed = createServer();
    const { port } = await listen(closed, 0, '127.0.0.1');
    await closeGracefully(closed, 10);
    const client = createChainRpcClient({ url: `http://127.0.0.1:${port}` });
    await expect(client.call('getblockcount')).rejects.toMatchObject({ kind: 'unreachable' });
    client.close();
    handler = () => undefined; // never answers
    const slow = createChainRpcClient({ url, timeoutMs: 100 });
    await expect(slow.call('getblockcount')).rejects.toMatchObject({ kind: 'unreachable' });
    slow.close();
  });

  it('sends a batch and returns each result or error in order', async () => {
    handler = (body, _req, res) => {
      const calls = body as Array<{ id: string; params: [string] }>;
      reply(
        res,
        200,
        calls
          .map((c) =>
            c.params[0] === 'missing'
              ? { result: null, error: { code: -5, message: 'No such mempool transaction' }, id: c.id }
              : { result: { txid: c.params[0] }, error: null, id: c.id },
          )
          .reverse(),
      );
    };
    const client = createChainRpcClient({ url });
    const answers = await client.batch([
      { method: 'getrawtransaction', params: ['a', 2] },
      { method: 'getrawtransaction', params: ['missing', 2] },
      { method: 'getrawtransaction', params: ['c', 2] },
    ]);
    expect(answers[0]).toEqual({ txid: 'a' });
    expect(answers[1]).toBeInstanceOf(RpcError);
    expect((answers[1] as RpcError).code).toBe(-5);
    expect(answers[2]).toEqual({ txid: 'c' });
    client.close();
  });

  describe('the size of an answer', () => {
    it('refuses an answer over maxResponseBytes, announced or not', async () => {
      for (const chunked of [false, true]) {
        handler = (body, _req, res) => {
          const text = JSON.stringify({ jsonrpc: '2.0', result: 'x'.repeat(5_000), id: (body as { id: string }).id });
          if (chunked) {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.write(text.slice(0, 2_000));
            setTimeout(() => res.end(text.slice(2_000)), 20);
          } else reply(res, 200, text);
        };
        const client = createChainRpcClient({ url, maxResponseBytes: 4_096 });
        await expect(client.call('getblock', ['00', 3])).rejects.toMatchObject({
          kind: 'garbage',
          message: 'chain node answer over 4096 bytes',
        });
        client.close();
      }
    });
  });
});
