import { buildSilentPayment, plainScript, startChainDouble, type ChainDouble } from '@repo/chain-double';
import {
  createFundedWallet,
  makeSilentPayment,
  newSilentPaymentReceiver,
  startRegtestNode,
  type RawReply,
  type RegtestNode,
  type RegtestWallet,
} from '@repo/regtest';
import { send, basic } from '../support/real-node';

const USER = 'double';
const PASSWORD = 'double-pass';

/**
 * The shape of a JSON value: objects as their sorted keys (a txid as `<txid>`) with the shapes of their values,
 * arrays as the shapes of their elements (all alike: the first), scalars as their JSON type.
 */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // Keys that are txids (getrawmempool verbose) differ by nature: named by what they are.
    for (const key of Object.keys(value).sort())
      out[/^[0-9a-f]{64}$/.test(key) ? '<txid>' : key] = shape((value as Record<string, unknown>)[key]);
    return out;
  }
  return typeof value;
}

/** What must agree between the double and the node: status, content type, the answer's shape, error codes. */
function summary(reply: RawReply): unknown {
  let body: unknown = reply.text;
  try {
    const parsed = JSON.parse(reply.text) as unknown;
    const strip = (r: Record<string, unknown>) => ('error' in r && r.error !== null ? { ...r, error: r.error } : r);
    body = Array.isArray(parsed)
      ? parsed.map((r) => [shape(r), (r as { error?: unknown }).error])
      : typeof parsed === 'object' && parsed !== null && 'error' in parsed
        ? { shape: shape(strip(parsed)), error: parsed.error }
        : shape(parsed);
  } catch {
    // not JSON: compared as text
  }
  return { status: reply.status, type: reply.contentType, body };
}

/**
 * The chain double against a real bitcoind 29.2: the same request shapes (the spec's methods at
 * every verbosity, envelopes, errors) on a chain of the same kind (101 blocks, then a block with a
 * silent payment spending a P2TR and a P2WPKH output, then one in the mempool) must give answers
 * of the same shape, status and error codes. Where they differ, the node is right.
 */
describe('the chain double answers like a real bitcoind', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  let double: ChainDouble;
  const ids = { node: { block: '', confirmed: '', mempool: '' }, double: { block: '', confirmed: '', mempool: '' } };

  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node);
    const { address } = newSilentPaymentReceiver();
    ids.node.confirmed = (await makeSilentPayment(node, wallet, { address, sats: 300_000n })).txid;
    [ids.node.block] = (await wallet.mine(1)) as [string];
    // Its coins confirmed in the next block: the mempool holds the payment alone, on both sides.
    ids.node.mempool = (await makeSilentPayment(node, wallet, { address, sats: 200_000n })).txid;

    double = await startChainDouble({ user: USER, password: PASSWORD, chain: 'regtest', initialBlocks: 101, authFailureDelayMs: 0 });
    // The coins first (`fund` mines their block), so that one block follows the payment's, as on the node.
    const coins = [double.fund('p2tr'), double.fund('p2wpkh'), double.fund('p2tr'), double.fund('p2wpkh')];
    const paid = buildSilentPayment(coins.slice(0, 2), [{ address, sats: 300_000n }], plainScript(1));
    ids.double.confirmed = paid.txid;
    [ids.double.block] = double.mine(1, [paid.hex]) as [string];
    double.mine(1);
    const pending = buildSilentPayment(coins.slice(2), [{ address, sats: 200_000n }], plainScript(2));
    ids.double.mempool = double.sendRawTransaction(pending.hex);
  });
  afterAll(async () => {
    await node?.close();
    await double?.close();
  });

  async function compare(make: (x: { block: string; confirmed: string; mempool: string }) => string, path = '/', method = 'POST') {
    const fromNode = await node.post(make(ids.node), { path, method });
    const fromDouble = await send(double.url, make(ids.double), { path, method, auth: basic(USER, PASSWORD) });
    expect(summary(fromDouble)).toEqual(summary(fromNode));
  }
  const v1 = (method: string, params: unknown[] = []) => JSON.stringify({ jsonrpc: '1.0', id: 1, method, params });

  it('getblockchaininfo', () => compare(() => v1('getblockchaininfo')));
  it.each([0, 1, 2, 3, true, false])('getblock verbosity %p', (v) => compare((x) => v1('getblock', [x.block, v])));
  it.each([false, true, 0, 1, 2])('getrawtransaction verbose %p, confirmed and in the mempool', async (v) => {
    await compare((x) => v1('getrawtransaction', [x.confirmed, v]));
    await compare((x) => v1('getrawtransaction', [x.mempool, v]));
    await compare((x) => v1('getrawtransaction', [x.confirmed, v, x.block]));
  });
  it('getwalletinfo', async () => {
    await compare(() => v1('getwalletinfo'));
    await compare(() => v1('getwalletinfo'), '/wallet/nosuchwallet');
  });
  it('the other methods the double serves', async () => {
    await compare(() => v1('getblockcount'));
    await compare(() => v1('getbestblockhash'));
    await compare(() => v1('getblockhash', [0]));
    await compare((x) => v1('getblockheader', [x.block]));
    await compare((x) => v1('getblockheader', [x.block, false]));
    await compare(() => v1('getrawmempool'));
    await compare(() => v1('getrawmempool', [true]));
    await compare(() => v1('getmempoolinfo'));
    await compare(() => v1('getnetworkinfo'));
    await compare(() => v1('estimatesmartfee', [6]));
    await compare(() => v1('getbalances'));
    await compare(() => v1('listwallets'));
  });
  it('sendrawtransaction errors', async () => {
    await compare(() => v1('sendrawtransaction', ['00']));
    await compare(() => v1('sendrawtransaction', ['zz']));
  });
  it('method errors and bad arguments', async () => {
    await compare(() => v1('getblock', ['00'.repeat(32)]));
    await compare(() => v1('getblock', ['zz']));
    await compare((x) => v1('getblock', [x.block, 4]));
    await compare(() => v1('getrawtransaction', ['00'.repeat(32)]));
    await compare(() => v1('getblockhash', [100000]));
    await compare(() => v1('getblockhash', ['1']));
    // -1 with the method's whole help text (the double answered one line of it before).
    for (const method of ['getblockcount', 'getblock', 'getrawtransaction', 'sendrawtransaction', 'getblockhash', 'getwalletinfo']) {
      await compare(() =>
        v1(method, method.startsWith('get') && !['getblock', 'getrawtransaction', 'getblockhash'].includes(method) ? ['extra'] : []),
      );
    }
    await compare(() => v1('nosuchmethod'));
  });
  it('envelopes, batches, notifications, parse errors, HTTP methods', async () => {
    await compare(() => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getblockcount' }));
    await compare(() => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'nosuchmethod' }));
    await compare(() => JSON.stringify({ id: 1, method: 'getblockcount' }));
    await compare(() => JSON.stringify({ jsonrpc: '2.0', method: 'getblockcount' }));
    await compare(() => '[]');
    await compare(
      () => '[{"jsonrpc":"2.0","id":1,"method":"getblockcount"},{"id":2,"method":"nosuch"},5,{"jsonrpc":"2.0","method":"getblockcount"}]',
    );
    await compare(() => '{"jsonrpc":"1.0",');
    await compare(() => '"x"');
    await compare(() => '', '/', 'PUT');
    await compare(() => v1('getblockcount'), '/nosuchpath');
  });

  it('strings Core cannot read (escaped lone surrogates) and URIs with a query', async () => {
    await compare(() => '{"id":1,"method":"getblockcount\\ud800"}');
    await compare(() => '[{"id":1,"method":"getblockcount"},{"id":"\\udc00","method":"getblockcount"}]');
    await compare(() => '{"id":"\\ud83d\\ude00","method":"getblockcount"}');
    await compare(() => v1('getblockcount'), '/?x=1');
    await compare(() => v1('getwalletinfo'), '/wallet/nosuchwallet?x=1');
  });
});
