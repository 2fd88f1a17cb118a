import { loadBitcoindFixture } from '@repo/chain-double';
import { basic, NODE_PASSWORD, NODE_USER, post, startHarness, type Harness } from './support/helpers';

// The proxy must answer exactly as the node behind it: each recorded request is sent both
// through the proxy (client credentials) and straight to the double (node credentials),
// and the two answers must have the same status and the same bytes.
const SAME_AS_NODE = [
  'envelope.jsonrpc1.success',
  'envelope.jsonrpc1.no-id',
  'envelope.jsonrpc1.id-null',
  'envelope.jsonrpc2.success',
  'envelope.jsonrpc2.id-null',
  'envelope.jsonrpc2.id-string',
  'envelope.jsonrpc2.id-object',
  'envelope.jsonrpc2.notification',
  'envelope.jsonrpc2.notification-error',
  'envelope.no-version.success',
  'envelope.no-version.no-params',
  'envelope.jsonrpc-unsupported-version',
  'envelope.jsonrpc-not-string',
  'error.method-not-found.jsonrpc1',
  'error.method-not-found.jsonrpc2',
  'error.method-not-found.no-version',
  'error.method-not-string',
  'error.missing-method',
  'error.missing-method.jsonrpc2',
  'error.params-not-array-or-object',
  'error.params-not-array-or-object.jsonrpc2',
  'error.parse-error',
  'error.top-level-not-object',
  'error.empty-body',
  'error.block-not-found',
  'error.out-of-range.getblockhash',
  'getrawtransaction.not-found',
  'sendrawtransaction.invalid-hex.jsonrpc2',
  'sendrawtransaction.missing-inputs',
  'estimatesmartfee',
  'getnetworkinfo',
  'getblockcount',
  'getbestblockhash',
  'getblockchaininfo.jsonrpc2',
  'batch.simple',
  'batch.simple.jsonrpc2',
  'batch.empty',
  'batch.all-notifications',
  'batch.wallet-path',
  'getwalletinfo',
  'getwalletinfo.unknown-wallet-path',
  'bitcoin-cli.getblockchaininfo',
  'bitcoin-cli.error.method-not-found',
  'bitcoin-cli.rpcwallet.getwalletinfo',
  'http.get-method',
  'http.unknown-path',
  'http.no-content-type',
];

describe('envelopes through the proxy', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  async function both(name: string) {
    const f = loadBitcoindFixture(name);
    const send = async (url: string, auth: string) => {
      const res = await fetch(url + f.request.path, {
        method: f.request.http_method,
        headers: { Authorization: auth },
        body: f.request.http_method === 'POST' ? (f.request.body_raw ?? '') : undefined,
      });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    return {
      f,
      proxied: await send(h.url, basic('alice', 'alice-secret')),
      direct: await send(h.node.url, basic(NODE_USER, NODE_PASSWORD)),
    };
  }

  it.each(SAME_AS_NODE)('answers %s exactly as the node does', async (name) => {
    const { f, proxied, direct } = await both(name);
    expect(proxied).toEqual(direct);
    expect(proxied.status).toBe(f.status);
  });

  it('answers forbidden and malformed calls of a mixed batch itself, in place, with Core envelopes', async () => {
    const { proxied } = await both('batch.mixed');
    const f = loadBitcoindFixture('batch.mixed');
    expect(proxied.status).toBe(200);
    const got = JSON.parse(proxied.text) as { id?: unknown; error?: { code: number; message: string } | null; jsonrpc?: string }[];
    const recorded = f.body as typeof got;
    expect(got.map((r) => [r.id, r.jsonrpc, r.error?.code ?? null])).toEqual(
      // b5 (getblockhash "abc") is refused by the proxy's parameter check (-32602) instead of Core's -3.
      recorded.map((r) => [r.id, r.jsonrpc, r.id === 'b5' ? -32602 : (r.error?.code ?? null)]),
    );
    expect(got[3]?.error?.message).toContain('"height"');
  });

  it('answers a 2.0 notification with 204 and no body, even when the node is unreachable', async () => {
    h.node.setBehaviour('down');
    try {
      const res = await post(h.url, '{"jsonrpc":"2.0","method":"getblockcount","params":[]}');
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
    } finally {
      h.node.setBehaviour('normal');
    }
  });
});
