import { createServer, type Server, type Socket } from 'node:net';
import { createNodeConnections, type NodeConnections } from '../src/node-connections';
import { onHttpMessages } from './support/helpers';

// The node client's connections (src/node-connections.ts, an undici Pool) against a raw server.

type Outcome = { status: number; body: string } | { code: string; answering: boolean; unsent: boolean };

describe('node connections (undici)', () => {
  let server: Server;
  const sockets = new Set<Socket>();
  let connections: NodeConnections | undefined;
  let requests: string[] = [];

  async function start(onRequest: (socket: Socket, count: number) => void, pool = 2): Promise<URL> {
    let count = 0;
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      onHttpMessages(socket, ({ head, body }) => {
        requests.push(`${head}\r\n\r\n${body}`);
        onRequest(socket, ++count);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    connections = createNodeConnections({ url, connections: pool, keepAliveMs: 1_000 });
    return url;
  }

  const exchange = (path = '/', body = '{}') =>
    new Promise<Outcome>((resolve) =>
      connections?.request(path, ['Content-Type', 'application/json', 'Authorization', 'Basic eA=='], body, {
        onComplete: (status, buf) => resolve({ status, body: buf.toString() }),
        onError: (code, answering, unsent) => resolve({ code, answering, unsent }),
      }),
    );

  afterEach(async () => {
    connections?.close();
    connections = undefined;
    requests = [];
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('sends the request as given and reads answers with a length, chunked, or running to the close, on kept-alive connections', async () => {
    await start((socket, count) => {
      if (count === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n{"a":1');
      else if (count === 2)
        socket.write('HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"b\r\n3\r\n":2\r\n1\r\n}\r\n0\r\n\r\n');
      else socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"c":3}');
    });
    expect(await exchange('/wallet/w', '{"x":"é"}')).toEqual({ status: 200, body: '{"a":1' });
    expect(requests[0]).toMatch(/^POST \/wallet\/w HTTP\/1\.1\r\n/i);
    expect(requests[0]).toMatch(/\r\ncontent-type: application\/json\r\n/i);
    expect(requests[0]).toMatch(/\r\nauthorization: Basic eA==\r\n/i);
    expect(requests[0]?.endsWith('\r\n\r\n{"x":"é"}'.replace('é', Buffer.from('é').toString('latin1')))).toBe(true);
    expect(await exchange()).toEqual({ status: 500, body: '{"b":2}' });
    expect(await exchange()).toEqual({ status: 200, body: '{"c":3}' });
  });

  it('says whether the answer had begun when the connection is cut, and names the refusal of a closed port', async () => {
    await start((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"res');
      setTimeout(() => socket.destroy(), 10);
    });
    expect(await exchange()).toMatchObject({ answering: true, unsent: false });
    const closed = new URL(`http://127.0.0.1:1`);
    connections?.close();
    connections = createNodeConnections({ url: closed, connections: 1, keepAliveMs: 1_000 });
    expect(await exchange()).toEqual({ code: 'ECONNREFUSED', answering: false, unsent: false });
  });

  it('tells a request the node closed its kept-alive connection on, before a byte of answer, from one it had begun to answer', async () => {
    // One connection: the second request goes out on the first one's.
    await start((socket, count) => {
      if (count === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
      else socket.destroy();
    }, 1);
    expect(await exchange()).toEqual({ status: 200, body: '{}' });
    expect(await exchange()).toMatchObject({ answering: false, unsent: true });
  });

  it('keeps an idle connection for the next request, and closes it once idle keepAliveMs (1 s here)', async () => {
    let opened = 0;
    await start((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}'), 1);
    server.on('connection', () => opened++);
    expect(await exchange()).toEqual({ status: 200, body: '{}' });
    await new Promise((r) => setTimeout(r, 500));
    expect(await exchange()).toEqual({ status: 200, body: '{}' });
    expect([opened, sockets.size]).toEqual([1, 1]);
    // Idle 1 s from the second answer, closed within a quarter more (the sweep's period).
    await new Promise((r) => setTimeout(r, 1_600));
    expect(sockets.size).toBe(0);
    expect(await exchange()).toEqual({ status: 200, body: '{}' });
    expect(opened).toBe(2);
  });
});
