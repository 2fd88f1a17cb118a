import {
  createFundedWallet,
  makeSilentPayment,
  newSilentPaymentReceiver,
  startRegtestNode,
  type RegtestNode,
  type RegtestWallet,
} from '@repo/regtest';
import { basic, both, CLIENT_PASSWORD, CLIENT_USER, proxyCookieAuth, send, startProxy, v1, type RealProxy } from '../support/real-node';

/**
 * The proxy in front of a real Bitcoin Core 29 on regtest: every answer the proxy promises to
 * pass through is compared byte for byte with the node's own answer to the same request.
 */
describe('rpc-proxy in front of a real bitcoind', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  let proxy: RealProxy;
  let blockHash: string;
  let confirmedTxid: string;
  let mempoolTxid: string;

  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node);
    const { address } = newSilentPaymentReceiver();
    const confirmed = await makeSilentPayment(node, wallet, { address, sats: 300_000n });
    [blockHash] = (await wallet.mine(1)) as [string];
    confirmedTxid = confirmed.txid;
    mempoolTxid = (await makeSilentPayment(node, wallet, { address, sats: 200_000n, confirmInputs: false })).txid;
    proxy = await startProxy(node);
  });
  afterAll(async () => {
    await proxy?.close();
    await node?.close();
  });

  /** The proxy's answer equals the node's: status, content type and every byte. */
  async function expectSame(body: string, path = '/'): Promise<string> {
    const { viaProxy, direct } = await both(proxy, node, body, path);
    expect({ status: viaProxy.status, type: viaProxy.contentType, text: viaProxy.text }).toEqual({
      status: direct.status,
      type: direct.contentType,
      text: direct.text,
    });
    return direct.text;
  }

  describe('the methods of the spec, answered as the node answers them', () => {
    it('getblockchaininfo', async () => {
      const text = await expectSame(v1('getblockchaininfo'));
      expect(JSON.parse(text).result).toMatchObject({ chain: 'regtest', blocks: 103, initialblockdownload: false });
    });

    it.each([0, 1, 2, 3, true, false])('getblock at verbosity %p', async (verbosity) => {
      const text = await expectSame(v1('getblock', [blockHash, verbosity]));
      if (verbosity === 3) {
        const tx = JSON.parse(text).result.tx.find((t: { txid: string }) => t.txid === confirmedTxid);
        expect(tx.vin[0].prevout.scriptPubKey.type).toBe('witness_v1_taproot');
      }
    });

    it('getblock at verbosity 0 answered again from the cache, byte-identical', async () => {
      const first = await expectSame(v1('getblock', [blockHash, 0], 7));
      expect(proxy.app.cache.size).toBeGreaterThan(0);
      const again = await send(proxy.url, v1('getblock', [blockHash, 0], 7));
      expect(again.text).toBe(first);
    });

    it.each([false, true, 0, 1, 2])('getrawtransaction verbose %p of a confirmed and of a mempool transaction', async (verbose) => {
      await expectSame(v1('getrawtransaction', [confirmedTxid, verbose]));
      await expectSame(v1('getrawtransaction', [mempoolTxid, verbose]));
      await expectSame(v1('getrawtransaction', [confirmedTxid, verbose, blockHash]));
    });

    it('getrawtransaction of an unknown txid: the node’s -5, passed through', async () => {
      const text = await expectSame(v1('getrawtransaction', ['00'.repeat(32), true]));
      expect(JSON.parse(text).error.code).toBe(-5);
    });

    it('getwalletinfo on / (one wallet loaded) and on /wallet/<name>', async () => {
      await expectSame(v1('getwalletinfo'));
      const text = await expectSame(v1('getwalletinfo'), `/wallet/${wallet.name}`);
      expect(JSON.parse(text).result.walletname).toBe(wallet.name);
      const missing = await expectSame(v1('getwalletinfo'), '/wallet/nosuchwallet');
      expect(JSON.parse(missing).error.code).toBe(-18);
    });

    it('sendrawtransaction: a valid transaction is accepted through the proxy; invalid ones get the node’s errors', async () => {
      const raw = await node.rpc<string>('createrawtransaction', [[], [{ [await wallet.newAddress()]: 0.001 }]]);
      const funded = await node.rpc<{ hex: string }>('fundrawtransaction', [raw], wallet.name);
      const signed = await node.rpc<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [funded.hex], wallet.name);
      expect(signed.complete).toBe(true);
      const viaProxy = await send(proxy.url, v1('sendrawtransaction', [signed.hex]));
      expect(viaProxy.status).toBe(200);
      const txid = JSON.parse(viaProxy.text).result as string;
      expect(await node.rpc('getrawmempool')).toContain(txid);
      // Sent again: Core answers the txid of a transaction already in its mempool.
      await expectSame(v1('sendrawtransaction', [signed.hex]));
      await wallet.mine(1);
      const known = JSON.parse(await expectSame(v1('sendrawtransaction', [signed.hex])));
      expect(known.error.code).toBe(-27);
      const garbage = JSON.parse(await expectSame(v1('sendrawtransaction', ['00'])));
      expect(garbage.error).toEqual({ code: -22, message: expect.stringContaining('TX decode failed') });
    });
  });

  describe('envelopes', () => {
    it.each([
      ['1.0', { jsonrpc: '1.0', id: 1 }],
      ['2.0', { jsonrpc: '2.0', id: 'a' }],
      ['no version', { id: null }],
    ])('%s: a success and a method error as the node writes them', async (_name, envelope) => {
      await expectSame(JSON.stringify({ ...envelope, method: 'getblockcount', params: [] }));
      await expectSame(JSON.stringify({ ...envelope, method: 'getblockhash', params: [100000] }));
      await expectSame(JSON.stringify({ ...envelope, method: 'getblockhash', params: { height: 1 } }));
    });

    it('2.0 notifications: 204 with an empty body, alone or as a whole batch', async () => {
      for (const body of [
        '{"jsonrpc":"2.0","method":"getblockcount","params":[]}',
        '[{"jsonrpc":"2.0","method":"getblockcount"},{"jsonrpc":"2.0","method":"getbestblockhash"}]',
      ]) {
        const { viaProxy, direct } = await both(proxy, node, body);
        expect(direct).toMatchObject({ status: 204, text: '' });
        expect(viaProxy).toMatchObject({ status: 204, text: '' });
      }
    });

    it('batches: mixed versions, notifications, errors and non-object elements, in order', async () => {
      await expectSame('[]');
      await expectSame(
        JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'getblockcount' },
          { jsonrpc: '1.0', id: 2, method: 'nosuchmethod' },
          { id: 3, method: 'getbestblockhash' },
          { jsonrpc: '2.0', method: 'getblockcount' },
          5,
          { jsonrpc: '2.0', id: 6, method: 'getblock', params: [blockHash, 1] },
          { jsonrpc: '1.0', id: 7, method: 'getrawtransaction', params: [confirmedTxid, false] },
        ]),
      );
    });

    it('calls that arrive together go to the node as one batch, and each gets the answer the node gives it alone', async () => {
      const calls: [string, string][] = [
        [v1('getblockhash', [1], 'a'), '/'],
        [v1('getblockhash', [100000], 'b'), '/'], // -8, HTTP 500
        [JSON.stringify({ jsonrpc: '2.0', id: 'c', method: 'getblockhash', params: [100000] }), '/'], // -8, HTTP 200
        [JSON.stringify({ jsonrpc: '2.0', id: 'd', method: 'getblockcount', params: [] }), '/'],
        [JSON.stringify({ id: 'e', method: 'getblockhash', params: { height: 2 } }), '/'],
        [v1('getbalances', ['extra'], 'f'), `/wallet/${wallet.name}`], // -1 with the help text
        [v1('getwalletinfo', [], 'g'), `/wallet/${wallet.name}`],
        [v1('getwalletinfo', [], 'h'), '/wallet/nosuchwallet'], // -18
        [v1('getbalances', [], 'i'), `/wallet/${wallet.name}`],
        [v1('sendrawtransaction', ['00'], 'j'), '/'], // -22
        [v1('getblockheader', [blockHash, false], 'k'), '/'],
        [v1('getmempoolentry', ['00'.repeat(32)], 'l'), '/'], // -5
      ];
      const before = { ...proxy.app.node.batches };
      // All sent at once, twice over: the proxy reads them in the same turns of its loop. 24
      // connections from one address: below the per-address cap (32), whose excess is closed.
      const viaProxy = await Promise.all([0, 1].flatMap(() => calls.map(([body, path]) => send(proxy.url, body, { path }))));
      expect(proxy.app.node.batches.calls - before.calls).toBeGreaterThan(0);
      for (const [i, reply] of viaProxy.entries()) {
        const [body, path] = calls[i % calls.length] as [string, string];
        const direct = await node.post(body, { path });
        expect({ call: body, path, status: reply.status, type: reply.contentType, text: reply.text }).toEqual({
          call: body,
          path,
          status: direct.status,
          type: direct.contentType,
          text: direct.text,
        });
      }
    });

    it('bodies with a string Core cannot read (invalid UTF-8, lone surrogates) and URIs with a query, as the node answers them', async () => {
      /** The same bytes to the proxy and to the node: status, type and body must be the node's. */
      const same = async (body: Buffer, path = '/') => {
        const ask = async (url: string, auth: string) => {
          const res = await fetch(url + path, {
            method: 'POST',
            headers: { Authorization: auth, 'Content-Type': 'application/json' },
            body,
          });
          return { path, status: res.status, type: res.headers.get('content-type'), text: await res.text() };
        };
        expect(await ask(proxy.url, basic(CLIENT_USER, CLIENT_PASSWORD))).toEqual(await ask(node.url, node.authorization()));
      };
      const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => Buffer.from(p as string)));
      await same(bytes('{"id":1,"method":"getblockcount', [0xff], '"}'));
      await same(bytes('{"id":1,"method":"x', [0xed, 0xa0, 0x80], '"}'));
      await same(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"stop\\ud800"}'));
      await same(bytes('[{"id":1,"method":"getblockcount"},{"id":"', [0xff], '","method":"getblockcount"}]'));
      await same(Buffer.from('[{"id":1,"method":"getblockcount"},{"id":"\\udc00","method":"getblockcount"}]'));
      await same(bytes('[{"id":"\\ud83d\\ude00 ', [0xc3, 0xa9], '","method":"getblockcount"}]'));
      await same(Buffer.from(v1('getblockcount')), '/?x=1');
      await same(Buffer.from(v1('getwalletinfo')), `/wallet/${wallet.name}?x=1`); // wallet "<name>?x=1": -18
    });

    it('parse errors and non-POST methods as the node answers them', async () => {
      await expectSame('{"jsonrpc":"1.0",');
      await expectSame('"just a string"');
      const { viaProxy, direct } = await both(proxy, node, '');
      expect(viaProxy.status).toBe(direct.status);
      const getProxy = await send(proxy.url, '', { method: 'PUT' });
      const getNode = await node.post('', { method: 'PUT' });
      expect([getProxy.status, getProxy.text]).toEqual([getNode.status, getNode.text]);
    });
  });

  describe('the proxy’s own rules', () => {
    it('authenticates its clients itself (-1 in a 401), and the node’s cookie is no key to the proxy', async () => {
      const none = await send(proxy.url, v1('getblockcount', [], 9), { auth: null });
      expect(none.status).toBe(401);
      expect(JSON.parse(none.text)).toEqual({ result: null, error: { code: -1, message: 'authentication required' }, id: 9 });
      const wrong = await send(proxy.url, v1('getblockcount', [], 9), { auth: basic('alice', 'nope') });
      expect(wrong.status).toBe(401);
      expect(JSON.parse(wrong.text).error).toEqual({ code: -1, message: 'incorrect credentials' });
      const nodeCookie = await send(proxy.url, v1('getblockcount'), { auth: node.authorization() });
      expect(nodeCookie.status).toBe(401);
      const cookie = await send(proxy.url, v1('getblockcount'), { auth: proxyCookieAuth(proxy) });
      expect(JSON.parse(cookie.text).result).toBe(await node.rpc('getblockcount'));
    });

    it('-32601 for a method not allowed: the very bytes the node sends for a method it does not know', async () => {
      for (const version of ['1.0', '2.0']) {
        const viaProxy = await send(proxy.url, JSON.stringify({ jsonrpc: version, id: 4, method: 'stop', params: [] }));
        const direct = await node.post(JSON.stringify({ jsonrpc: version, id: 4, method: 'nosuchmethod', params: [] }));
        expect([viaProxy.status, viaProxy.text]).toEqual([direct.status, direct.text]);
      }
      expect(await node.rpc('getblockcount')).toBeGreaterThan(0); // `stop` never reached the node
    });

    it('-32602 for parameters the proxy checks, before the node sees them', async () => {
      const bad = await send(proxy.url, v1('getblock', ['zz', 1]));
      expect(bad.status).toBe(500);
      expect(JSON.parse(bad.text).error).toEqual({ code: -32602, message: expect.stringContaining('"blockhash"') });
      const odd = await send(proxy.url, v1('sendrawtransaction', ['abc']));
      expect(JSON.parse(odd.text).error.code).toBe(-32602);
      const verbosity = await send(proxy.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getblock', params: [blockHash, 4] }));
      expect(verbosity.status).toBe(200);
      expect(JSON.parse(verbosity.text).error.code).toBe(-32602);
    });

    it('-1 from the node (the help text of a method given wrong arguments) passes through unchanged', async () => {
      const text = await expectSame(v1('getbalances', ['extra']), `/wallet/${wallet.name}`);
      expect(JSON.parse(text).error.code).toBe(-1);
    });
  });

  describe('the node restarted under the proxy', () => {
    it('answers -32603 "node unreachable" while the node is down, then recovers with the node’s new cookie', async () => {
      const oldCookie = node.authorization();
      const ready = async () => {
        await new Promise((r) => setTimeout(r, 600)); // past the reuse of the last probe's answer
        const res = await fetch(`${proxy.url}/ready`);
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      expect(await ready()).toEqual({
        status: 200,
        body: {
          status: 'ready',
          node: { chain: 'regtest', blocks: expect.any(Number), headers: expect.any(Number), initialblockdownload: false },
        },
      });
      await node.stop();
      expect(await ready()).toEqual({
        status: 503,
        body: { status: 'unready', reason: 'node-unreachable', message: 'node unreachable (ECONNREFUSED)' },
      });
      const down1 = await send(proxy.url, v1('getblockcount', [], 1));
      expect(down1.status).toBe(500);
      expect(JSON.parse(down1.text)).toEqual({ result: null, error: { code: -32603, message: 'node unreachable (ECONNREFUSED)' }, id: 1 });
      const down2 = await send(proxy.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'getblockcount' }));
      expect(down2.status).toBe(200);
      expect(JSON.parse(down2.text).error.message).toBe('node unreachable (ECONNREFUSED)');
      await node.start();
      expect(node.authorization()).not.toBe(oldCookie);
      await node.rpc('loadwallet', [wallet.name]);
      await expectSame(v1('getblockchaininfo'));
      await expectSame(v1('getwalletinfo'), `/wallet/${wallet.name}`);
      expect((await ready()).status).toBe(200);
      expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
      // bitcoind removes its cookie when it stops: if the proxy looked meanwhile, it said the file
      // was missing (ENOENT, nothing worse), then read the new one; else it just read the new one.
      const cookieLines = proxy.lines.filter((l) => String(l.msg).startsWith('node cookie file')).map((l) => [l.msg, l.code ?? l.was]);
      expect([
        [['node cookie file changed: using the new cookie', undefined]],
        [
          ['node cookie file missing (node not started yet, or BITCOIND_COOKIE_FILE wrong)', 'ENOENT'],
          ['node cookie file readable again', 'ENOENT'],
        ],
      ]).toContainEqual(cookieLines);
    });
  });
});
