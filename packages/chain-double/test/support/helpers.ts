import { loadBitcoindContext, loadBitcoindFixture, signSpend, type BitcoindFixture, type ChainDouble, type FundedOutput } from '../../src';

export const CONTEXT = loadBitcoindContext();
export const USER = String(CONTEXT.rpc_user);
export const PASSWORD = String(CONTEXT.rpc_password);

/** Raw HTTP exchange result. */
export interface Exchange {
  status: number;
  headers: Headers;
  text: string;
}

/** Sends `body` raw to `url + path` with the recorded request headers (Host and length aside). */
export async function send(
  url: string,
  path: string,
  body: string | null,
  headers: Record<string, string>,
  method = 'POST',
): Promise<Exchange> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!/^(host|content-length|connection)$/i.test(k)) h[k] = v;
  const res = await fetch(url + path, { method, headers: h, body: method === 'POST' ? (body ?? '') : undefined });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Replays a fixture's request (with its exact bytes, optionally rewritten) against `url`. */
export function replay(url: string, fixture: BitcoindFixture, rewrite: (body: string) => string = (b) => b): Promise<Exchange> {
  const body = fixture.request.body_raw === null ? null : rewrite(fixture.request.body_raw);
  return send(url, fixture.request.path, body, fixture.request.headers, fixture.request.http_method);
}

/** A JSON value's shape: key order and value types, recursively (arrays: the set of element shapes). */
export function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return { array: [...new Set(value.map((v) => JSON.stringify(shape(v))))].sort() };
  if (typeof value === 'object') {
    const out: [string, unknown][] = [];
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.push([k, shape(v)]);
    return out;
  }
  return typeof value;
}

/** Basic authorization header value. */
export function basic(user = USER, password = PASSWORD): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** Calls one method with a JSON-RPC 1.0 envelope; returns the parsed body. */
export async function rpc(
  url: string,
  method: string,
  params: unknown = [],
  path = '/',
): Promise<{ status: number; body: { result: unknown; error: { code: number; message: string } | null; id: unknown } }> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: basic() },
    body: JSON.stringify({ jsonrpc: '1.0', id: 't', method, params }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

/** The twin of the recording's block 112 and the funded outputs behind it. */
export interface Twin {
  blockHash: string;
  taprootSpend: string;
  segwitV0Spend: string;
  p2shAndP2pkhSpend: string;
  mempoolTx: string;
  height: number;
  funded: Record<'p2tr' | 'p2wpkh' | 'p2sh-p2wpkh' | 'p2pkh' | 'p2pkh2', FundedOutput>;
}

/**
 * Builds, on the double, a block like the recording's block 112: a coinbase, a taproot
 * key-path spend (to two P2WPKH), a P2WPKH spend (to two P2TR) and a transaction spending a
 * P2SH-P2WPKH and a P2PKH input (to two P2WPKH); then one P2PKH spend left in the mempool.
 */
export function buildTwin(node: ChainDouble): Twin {
  const funded = {
    p2tr: node.fund('p2tr', 500_000_000n),
    p2wpkh: node.fund('p2wpkh', 4_999_990_000n),
    'p2sh-p2wpkh': node.fund('p2sh-p2wpkh', 125_000_000n),
    p2pkh: node.fund('p2pkh', 75_000_000n),
    p2pkh2: node.fund('p2pkh', 4_925_000_000n),
  };
  const wpkh = node.fund('p2wpkh', 1_000n * 1_000n);
  const tr = node.fund('p2tr', 1_000_000n);
  const taprootSpend = signSpend(
    [funded.p2tr],
    [
      { script: wpkh.script, amount: 100_000_000n },
      { script: wpkh.script, amount: 399_998_690n },
    ],
    { lockTime: node.tipHeight() },
  );
  const segwitV0Spend = signSpend(
    [funded.p2wpkh],
    [
      { script: tr.script, amount: 4_949_988_350n },
      { script: tr.script, amount: 50_000_000n },
    ],
  );
  const p2shAndP2pkhSpend = signSpend(
    [funded.p2pkh, funded['p2sh-p2wpkh']],
    [
      { script: wpkh.script, amount: 190_000_000n },
      { script: wpkh.script, amount: 9_996_890n },
    ],
  );
  const ids = [taprootSpend, segwitV0Spend, p2shAndP2pkhSpend].map((hex) => node.sendRawTransaction(hex));
  const [blockHash] = node.mine(1);
  const mempoolTx = node.sendRawTransaction(
    signSpend(
      [funded.p2pkh2],
      [
        { script: wpkh.script, amount: 4_894_996_340n },
        { script: wpkh.script, amount: 30_000_000n },
      ],
    ),
  );
  return {
    height: node.tipHeight(),
    blockHash: blockHash as string,
    taprootSpend: ids[0] as string,
    segwitV0Spend: ids[1] as string,
    p2shAndP2pkhSpend: ids[2] as string,
    mempoolTx,
    funded,
  };
}

/** Rewrites the recording's hashes and txids in a request body to the twin's. */
export function twinRewriter(twin: Twin): (body: string) => string {
  const map: [string, string][] = [
    [String(CONTEXT.block_112_hash), twin.blockHash],
    [String(CONTEXT.txid_taproot_spend), twin.taprootSpend],
    [String(CONTEXT.txid_segwit_v0_spend), twin.segwitV0Spend],
    [String(CONTEXT.txid_p2sh_segwit_and_p2pkh_spend), twin.p2shAndP2pkhSpend],
    [String(CONTEXT.txid_sendrawtransaction_valid), twin.mempoolTx],
  ];
  map.push(['"params":[112]', `"params":[${twin.height}]`]);
  return (body) => map.reduce((b, [from, to]) => b.split(from).join(to), body);
}

export { loadBitcoindFixture };
