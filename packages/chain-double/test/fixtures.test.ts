import { listBitcoindFixtures, loadBitcoindFixture, startChainDouble, type BitcoindFixture, type ChainDouble } from '../src';
import { PASSWORD, USER, buildTwin, replay, shape, twinRewriter, type Exchange, type Twin } from './support/helpers';

// Every recording is replayed against the double. Where the answer does not depend on the
// chain (errors, envelopes of getblockcount at height 112, auth, HTTP), the body must be
// identical; elsewhere the shape (keys in order, types) must be.

/** Recordings of methods the double does not serve (it answers -32601 for them instead). */
const NOT_SERVED = [
  'getnewaddress.bech32m',
  'testmempoolaccept',
  'error.invalid-params-32602.disconnectnode',
  'error.invalid-params-32602.disconnectnode.jsonrpc2',
];
/** Chain-dependent recordings, replayed on the twin of block 112 and compared by shape. */
const BY_SHAPE = [
  'getblockchaininfo',
  'getblockchaininfo.jsonrpc2',
  'bitcoin-cli.getblockchaininfo',
  'getbestblockhash',
  'getblockhash',
  'getblockheader.verbose-false',
  'getblockheader.verbose-true',
  'getblock.verbosity0',
  'getblock.verbosity1',
  'getblock.verbosity2',
  'getblock.verbosity3',
  'getblock.verbosity-named',
  'bitcoin-cli.named.getblock',
  'getrawtransaction.verbose-false',
  'getrawtransaction.verbose-true',
  'getrawtransaction.verbose-true.with-blockhash',
  'getrawtransaction.verbosity2',
  'getrawtransaction.segwit-v0.verbose-true',
  'getrawtransaction.p2sh-segwit-and-p2pkh.verbosity2',
  'getrawtransaction.mempool.verbose-true',
  'getmempoolinfo',
  'getrawmempool',
  'getwalletinfo',
  'getwalletinfo.jsonrpc2',
  'bitcoin-cli.rpcwallet.getwalletinfo',
  'getbalances',
  'batch.simple',
  'batch.simple.jsonrpc2',
  'batch.mixed',
  'batch.wallet-path',
];
/** Recordings checked by their own tests (they change the chain or need signet). */
const ELSEWHERE = [
  'sendrawtransaction.valid',
  'sendrawtransaction.valid.jsonrpc2-resend',
  'sendrawtransaction.already-confirmed',
  'signet.getblockchaininfo',
  'signet.getblockchaininfo.jsonrpc2',
  'signet.getblockhash.0',
  'error.too-many-params',
];
const EXACT = listBitcoindFixtures().filter((n) => ![...NOT_SERVED, ...BY_SHAPE, ...ELSEWHERE].includes(n));

function withoutNext(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'nextblockhash' ? undefined : v)));
}

function expectSameHttp(got: Exchange, f: BitcoindFixture): void {
  expect(got.status).toBe(f.status);
  expect(got.headers.get('content-type') ?? undefined).toBe(f.headers['Content-Type']);
  expect(got.headers.get('www-authenticate') ?? undefined).toBe(f.headers['WWW-Authenticate']);
  if (f.status === 204) expect(got.text).toBe('');
}

describe('the double answers like the recordings', () => {
  let at112: ChainDouble;
  let twinNode: ChainDouble;
  let twin: Twin;

  beforeAll(async () => {
    at112 = await startChainDouble({ user: USER, password: PASSWORD, initialBlocks: 112, wallets: ['testwallet', 'trwallet'] });
    twinNode = await startChainDouble({ user: USER, password: PASSWORD });
    twin = buildTwin(twinNode);
  });
  afterAll(async () => {
    await at112.close();
    await twinNode.close();
  });

  it('covers every recording', () => {
    expect(EXACT.length + NOT_SERVED.length + BY_SHAPE.length + ELSEWHERE.length).toBe(listBitcoindFixtures().length);
  });

  it.each(EXACT)('answers %s byte for byte', async (name) => {
    const f = loadBitcoindFixture(name);
    const got = await replay(at112.url, f);
    expectSameHttp(got, f);
    expect(got.text).toBe(f.body_raw);
  });

  it.each(BY_SHAPE)('answers %s with the recorded shape', async (name) => {
    const f = loadBitcoindFixture(name);
    const got = await replay(twinNode.url, f, twinRewriter(twin));
    expectSameHttp(got, f);
    expect(got.text.endsWith('\n')).toBe(true);
    const body = JSON.parse(got.text) as unknown;
    expect(shape(withoutNext(body))).toEqual(shape(withoutNext(f.body)));
  });

  it.each(NOT_SERVED)('answers -32601 for the unserved method of %s', async (name) => {
    const f = loadBitcoindFixture(name);
    const got = await replay(at112.url, f);
    expect((JSON.parse(got.text) as { error: { code: number } }).error.code).toBe(-32601);
  });

  it('answers too many parameters with -1 and the help text', async () => {
    const f = loadBitcoindFixture('error.too-many-params');
    const got = await replay(at112.url, f);
    expectSameHttp(got, f);
    const body = JSON.parse(got.text) as { error: { code: number; message: string } };
    expect(body.error.code).toBe((f.body as { error: { code: number } }).error.code);
    expect(body.error.message.startsWith('getblockcount')).toBe(true);
  });

  it('writes block 112 of the twin with the recorded transaction kinds, in order', async () => {
    const f = loadBitcoindFixture('getblock.verbosity3');
    const got = JSON.parse((await replay(twinNode.url, f, twinRewriter(twin))).text) as typeof f.body;
    type Tx = { vin: Record<string, unknown>[]; vout: { scriptPubKey: { type: string } }[] };
    const kinds = (b: unknown) =>
      (b as { result: { tx: Tx[] } }).result.tx.map((t) => ({
        vin: t.vin.map((v) => Object.keys(v)),
        vout: t.vout.map((o) => o.scriptPubKey.type),
        prevout: t.vin.map((v) => (v.prevout as { scriptPubKey: { type: string } } | undefined)?.scriptPubKey.type),
      }));
    expect(kinds(got)).toEqual(kinds(f.body));
  });
});

describe('sendrawtransaction on the double', () => {
  let node: ChainDouble;
  beforeAll(async () => {
    node = await startChainDouble({ user: USER, password: PASSWORD });
  });
  afterAll(() => node.close());

  it('accepts, re-accepts from the mempool, then refuses once confirmed, as recorded', async () => {
    const twin = buildTwin(node);
    const hex = node.chain.mempool.get(twin.mempoolTx)!.tx.hex;
    const recordedHex = String((loadBitcoindFixture('sendrawtransaction.valid').request.params as string[])[0]);
    const rewrite = (b: string) => b.split(recordedHex).join(hex);
    for (const name of ['sendrawtransaction.valid', 'sendrawtransaction.valid.jsonrpc2-resend']) {
      const f = loadBitcoindFixture(name);
      const got = await replay(node.url, f, rewrite);
      expectSameHttp(got, f);
      expect(got.text).toBe(
        twinRewriter(twin)(f.body_raw)
          .split(String(f.body_raw.match(/[0-9a-f]{64}/)?.[0]))
          .join(twin.mempoolTx),
      );
    }
    node.mine(1);
    const f = loadBitcoindFixture('sendrawtransaction.already-confirmed');
    const got = await replay(node.url, f, (b) => b.split(String((f.request.params as string[])[0])).join(hex));
    expectSameHttp(got, f);
    expect(got.text).toBe(f.body_raw);
  });
});

describe('the signet double', () => {
  let node: ChainDouble;
  beforeAll(async () => {
    node = await startChainDouble({ user: USER, password: PASSWORD, chain: 'signet', initialBlocks: 0 });
  });
  afterAll(() => node.close());

  it('starts at the signet genesis block', async () => {
    const f = loadBitcoindFixture('signet.getblockhash.0');
    const got = await replay(node.url, f);
    expect(got.text).toBe(f.body_raw);
  });

  it.each(['signet.getblockchaininfo', 'signet.getblockchaininfo.jsonrpc2'])(
    'answers %s byte for byte at genesis (but size_on_disk and progress)',
    async (name) => {
      const f = loadBitcoindFixture(name);
      const got = await replay(node.url, f);
      expectSameHttp(got, f);
      const mask = (text: string) => text.replace(/"size_on_disk":\d+/, '').replace(/"verificationprogress":[0-9.e-]+/, '');
      expect(mask(got.text)).toBe(mask(f.body_raw));
    },
  );
});
