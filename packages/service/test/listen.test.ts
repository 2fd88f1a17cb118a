import { createServer, type Server } from 'node:http';
import { closeGracefully, listen } from '../src';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await closeGracefully(server, 100);
});

function server(): Server {
  const created = createServer((_req, res) => res.end('ok'));
  servers.push(created);
  return created;
}

describe('listen', () => {
  it('says which address is taken, keeping the code', async () => {
    const { port } = await listen(server(), 0, '127.0.0.1');
    const failed = listen(server(), port, '127.0.0.1');
    await expect(failed).rejects.toThrow(`cannot listen on 127.0.0.1:${port}: the port is in use by another process`);
    await expect(failed).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('says when HOST is no address of this machine', async () => {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a local interface.
    const failed = listen(server(), 0, '192.0.2.1');
    await expect(failed).rejects.toThrow('cannot listen on 192.0.2.1:0: no interface of this machine has that address (check HOST)');
    await expect(failed).rejects.toMatchObject({ code: 'EADDRNOTAVAIL' });
  });
});
