import { createServer } from 'node:http';
import { rawExchange } from '@repo/http/testing';
import { createSilentLogger, listen } from '@repo/service';
import { basic, CLIENT_PASSWORD, CLIENT_USER, startHarness, startProxyApp, type Harness } from './support/helpers';

/** Core's answer to a body it cannot read (bitcoind 29.2; the real-node suite checks it against the node). */
const PARSE_ERROR = '{"result":null,"error":{"code":-32700,"message":"Parse error"},"id":null}\n';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

// Bitcoin Core reads a request as the proxy must (README, "Envelopes"; "Endpoints"): it refuses
// a whole body with a string that is not valid UTF-8 to it, and it routes by the whole URI,
// query included. The proxy answered element by element (running the others) and routed by the
// path without its query.
describe('rpc-proxy reads the request as Bitcoin Core does', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness();
    port = Number(new URL(h.url).port);
  });
  afterAll(() => h.close());

  const exchange = (body: Buffer | string, path = '/') => {
    const b = typeof body === 'string' ? Buffer.from(body) : body;
    const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(CLIENT_USER, CLIENT_PASSWORD)}\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`;
    return rawExchange(port, Buffer.concat([Buffer.from(head), b]));
  };

  describe('a string Core refuses makes the whole body a parse error, and nothing reaches the node', () => {
    it.each([
      ['an invalid byte in a method name', bytes('{"id":1,"method":"getblockcount', [0xff], '"}')],
      ['a surrogate written in UTF-8 in a method name', bytes('{"id":1,"method":"x', [0xed, 0xa0, 0x80], '"}')],
      ['an escaped lone surrogate in a method name', '{"id":1,"method":"stop\\ud800"}'],
      ['a lone low surrogate', '{"jsonrpc":"2.0","id":1,"method":"x\\udc00"}'],
      ['a sequence cut short in a key', bytes('{"id":1,"method":"getblockcount","', [0xe2, 0x82], '":1}')],
      [
        'an invalid byte in one element of a batch (the other elements must not run)',
        bytes('[{"id":1,"method":"sendrawtransaction","params":["00"]},{"id":"', [0xff], '","method":"getblockcount"}]'),
      ],
      ['a lone surrogate in one element of a batch', '[{"id":1,"method":"getblockcount"},{"id":"\\ud800","method":"getblockcount"}]'],
    ])('%s', async (_name, body) => {
      const before = h.node.stats.total;
      const r = await exchange(body);
      expect({ status: r.status, body: r.body }).toEqual({ status: 500, body: PARSE_ERROR });
      expect(h.node.stats.total).toBe(before);
    });

    it('strings Core accepts are still read: pairs (escaped, mixed), multi-byte UTF-8 (the rules: coreAcceptsStrings of @repo/json-rpc)', async () => {
      const ok = await exchange(bytes('[{"id":"\\ud83d\\ude00 ', [0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80], '","method":"getblockcount"}]'));
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body)).toEqual([{ result: 101, error: null, id: '\u{1f600} é\u{1f600}' }]);
    });
  });

  describe('the whole URI routes the request, query included, as Core', () => {
    it('`/?x=1` is an unknown path: 404 with an empty body, nothing sent to the node', async () => {
      const before = h.node.stats.total;
      for (const path of ['/?x=1', '/?']) {
        const r = await exchange('{"id":1,"method":"getblockcount"}', path);
        expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 404, body: '' });
      }
      expect(h.node.stats.total).toBe(before);
    });

    it('`/wallet/<name>?x` goes to the node as it came (Core reads the wallet name "<name>?x")', async () => {
      // A node that records the URI it is asked.
      const seen: string[] = [];
      const fake = createServer((req, res) => {
        seen.push(req.url ?? '');
        req.resume().on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"result":{},"error":null,"id":1}\n'));
      });
      const { port: fakePort } = await listen(fake, 0, '127.0.0.1');
      const proxy = await startProxyApp(
        { BITCOIND_RPC_URL: `http://127.0.0.1:${fakePort}`, BITCOIND_RPC_USER: 'u', BITCOIND_RPC_PASSWORD: 'p' },
        createSilentLogger(),
      );
      try {
        const auth = basic(CLIENT_USER, CLIENT_PASSWORD);
        for (const path of ['/wallet/w1?x=1', '/wallet/w%20b?a', '/wallet/w1']) {
          const r = await fetch(proxy.url + path, {
            method: 'POST',
            headers: { Authorization: auth },
            body: '{"id":1,"method":"getwalletinfo"}',
          });
          expect(r.status).toBe(200);
        }
        expect(seen).toEqual(['/wallet/w1?x=1', '/wallet/w%20b?a', '/wallet/w1']);
      } finally {
        await proxy.close();
        fake.closeAllConnections();
        await new Promise((r) => fake.close(r));
      }
    });
  });
});
