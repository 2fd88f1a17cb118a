import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSilentPayment, plainScript, startChainDouble, type ChainDouble } from '@repo/chain-double';
import { createConfigClient } from '@repo/config-client';
import { freePort } from '@repo/regtest';
import { certificateFingerprint } from '@repo/service';
import { eventually, ROOT, startService, type ServiceProcess } from './support/processes';
import { subscribeToRelay, type RelaySubscriber } from './support/relay-subscriber';

const run = promisify(execFile);

let node: ChainDouble;
const services: ServiceProcess[] = [];
const ports: Record<string, number> = {};
let config: ServiceProcess;
let proxy: ServiceProcess;
let subscriber: RelaySubscriber | undefined;
// A wallet's client token with the payments scope (docs/relay.md, "Client tokens"): payment
// events reach only such clients.
const walletToken = randomBytes(24).toString('hex');
const tokenDir = mkdtempSync(join(tmpdir(), 'integration-tokens-'));

beforeAll(async () => {
  node = await startChainDouble({ user: 'nodeuser', password: 'nodepass', chain: 'signet' });
  for (const name of ['config', 'storage', 'proxy', 'relayAWs', 'relayAHttp', 'relayBWs', 'relayBHttp', 'payments'])
    ports[name] = await freePort();
  const publishToken = randomBytes(32).toString('hex');
  const tokenFile = join(tokenDir, 'relay-tokens');
  writeFileSync(tokenFile, `wallet events,payments ${walletToken}\n`, { mode: 0o600 });

  config = await startService(
    'config-server',
    'config-server',
    { PORT: String(ports.config), STORAGE_DIR: join(ROOT, 'storage') },
    'config-server listening',
  );
  services.push(config);
  services.push(await startService('storage', 'storage', { PORT: String(ports.storage) }, 'storage listening'));
  proxy = await startService(
    'rpc-proxy',
    'rpc-proxy',
    { PORT: String(ports.proxy), BITCOIND_RPC_URL: node.url, BITCOIND_RPC_USER: 'nodeuser', BITCOIND_RPC_PASSWORD: 'nodepass' },
    'rpc-proxy listening',
  );
  services.push(proxy);
  services.push(
    await startService(
      'relay-a',
      'relay',
      {
        WS_PORT: String(ports.relayAWs),
        HTTP_PORT: String(ports.relayAHttp),
        RELAY_ID: 'relay-a',
        RELAY_PUBLISH_TOKEN: publishToken,
        SYNC_INTERVAL_MS: '500',
      },
      'relay listening',
    ),
  );
  services.push(
    await startService(
      'relay-b',
      'relay',
      {
        WS_PORT: String(ports.relayBWs),
        HTTP_PORT: String(ports.relayBHttp),
        RELAY_ID: 'relay-b',
        RELAY_PUBLISH_TOKEN: publishToken,
        RELAY_PEERS: `ws://127.0.0.1:${ports.relayAWs}`,
        RELAY_TOKEN_FILE: tokenFile,
        SYNC_INTERVAL_MS: '500',
      },
      'relay listening',
    ),
  );
  services.push(
    await startService(
      'silent-payments',
      'silent-payments',
      {
        PORT: String(ports.payments),
        SP_NETWORK: 'signet',
        SP_START_HEIGHT: String(node.tipHeight()),
        SCAN_POLL_INTERVAL_MS: '200',
        CHAIN_RPC_URL: `http://127.0.0.1:${ports.proxy}`,
        CHAIN_RPC_COOKIE_FILE: join(proxy.dataDir, '.cookie'),
        RELAY_URL: `ws://127.0.0.1:${ports.relayAWs}`,
        RELAY_PUBLISH_TOKEN: publishToken,
      },
      'silent-payments listening',
    ),
  );

  // A client of the second relay: it sees what the payment service publishes on the first.
  subscriber = await subscribeToRelay(`ws://127.0.0.1:${ports.relayBWs}`, ['TransactionReceived', 'BlockScanned'], {
    Authorization: `Bearer ${walletToken}`,
  });
}, 120_000);

afterAll(async () => {
  subscriber?.close();
  const codes = await Promise.all(services.reverse().map((s) => s.stop()));
  await node?.close();
  rmSync(tokenDir, { recursive: true, force: true });
  // Every service stops gracefully on SIGTERM.
  expect(codes).toEqual(codes.map(() => 0));
});

async function rpc(method: string, params: unknown[] = []): Promise<{ status: number; text: string }> {
  const cookie = readFileSync(join(proxy.dataDir, '.cookie'), 'utf8').trim();
  const res = await fetch(`http://127.0.0.1:${ports.proxy}/`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(cookie).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '1.0', id: 'it', method, params }),
  });
  return { status: res.status, text: await res.text() };
}

describe('config server and client', () => {
  it('serves a file the client opens with the key the operator command prints', async () => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'apps/config-server/dist/cli.js'), 'key', 'dev'], {
      env: { PATH: process.env.PATH, DATA_DIR: config.dataDir },
    });
    const fingerprint = certificateFingerprint(readFileSync(join(config.dataDir, 'tls-cert.pem'), 'utf8'));
    const client = createConfigClient({ baseUrl: `https://127.0.0.1:${ports.config}`, fingerprint });
    const file = await client.fetchFile('dev', 'app.json', stdout.trim());
    const json = JSON.parse(new TextDecoder().decode(file.content)) as Record<string, string>;
    expect(json).toEqual({
      name: 'signet-wallet',
      database: 'postgres://wallet@127.0.0.1:5432/signet-wallet_dev',
      rpc: 'http://127.0.0.1:18443',
      note: 'fees are paid in $BTC',
      featureFlag: '${FEATURE_FLAG_NOT_DEFINED}',
    });
  });
});

describe('storage', () => {
  const key = randomBytes(32).toString('hex');
  const base = () => `http://127.0.0.1:${ports.storage}/storage`;

  it('stores a value and reads it back, durable in its SQLite file', async () => {
    const stored = await fetch(`${base()}/store`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ key: key.toUpperCase(), value: 'cafebabe', ttl: 3600 }),
    });
    expect(stored.status).toBe(200);
    const retrieved = await fetch(`${base()}/retrieve/${key}`);
    expect(retrieved.status).toBe(200);
    // docs/storage.md, "GET /storage/retrieve/{key}": the value with its lifetime.
    const body = (await retrieved.json()) as { ttl_remaining: number };
    expect(body).toEqual({ key, value: 'cafebabe', expires_at: expect.any(String), ttl_remaining: expect.any(Number) });
    expect(body.ttl_remaining).toBeGreaterThan(3_500);
    expect(body.ttl_remaining).toBeLessThanOrEqual(3_600);
  });

  it('refuses to overwrite a live key', async () => {
    const again = await fetch(`${base()}/store`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ key, value: '00' }),
    });
    expect(again.status).toBe(409);
  });
});

describe('rpc-proxy in front of the node', () => {
  it('answers getblockchaininfo for the signet chain', async () => {
    const res = await rpc('getblockchaininfo');
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text) as { result: { chain: string; blocks: number; bestblockhash: string }; error: null; id: string };
    expect(body).toMatchObject({ error: null, id: 'it', result: { chain: 'signet', bestblockhash: node.tipHash() } });
    expect(body.result.blocks).toBe(node.tipHeight());
  });

  it('answers a block byte for byte as the node does', async () => {
    const hash = node.tipHash();
    const viaProxy = await rpc('getblock', [hash, 0]);
    const direct = await fetch(node.url, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from('nodeuser:nodepass').toString('base64')}` },
      body: JSON.stringify({ jsonrpc: '1.0', id: 'it', method: 'getblock', params: [hash, 0] }),
    });
    expect(viaProxy.text).toBe(await direct.text());
  });

  it('refuses a method outside the allow-list', async () => {
    const res = await rpc('stop');
    expect(JSON.parse(res.text)).toMatchObject({ result: null, error: { code: -32601 } });
  });
});

describe('relay mesh', () => {
  it('lists the peer relay as connected', async () => {
    const relays = await eventually(
      async () => {
        const res = (await (await fetch(`http://127.0.0.1:${ports.relayBHttp}/relays`)).json()) as {
          relays: { relay_id: string; status: string }[];
        };
        return res.relays.find((r) => r.relay_id === 'relay-a' && r.status === 'connected');
      },
      10_000,
      'relay-a in /relays of relay-b',
    );
    expect(relays).toMatchObject({ relay_id: 'relay-a', status: 'connected' });
  });
});

describe('silent payments end to end', () => {
  it('finds a payment to a generated address, lists it with its confirmations, and tells the relay mesh', async () => {
    const generated = await fetch(`http://127.0.0.1:${ports.payments}/generate-address`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'invoice-1', amount: 0.0005 }),
    });
    expect(generated.status).toBe(201);
    const { address } = (await generated.json()) as { address: string };
    expect(address).toMatch(/^tsp1/);

    const coin = node.fund('p2wpkh');
    const payment = buildSilentPayment([coin], [{ address, sats: 50_000n }], plainScript(7));
    node.sendRawTransaction(payment.hex);
    const [blockHash] = node.mine(1) as [string];
    const height = node.tipHeight();

    type Payment = { id: string; txid: string; amount: number; address: string; block_height: number };
    const listed = await eventually(
      async () => {
        const res = (await (await fetch(`http://127.0.0.1:${ports.payments}/payments`)).json()) as { payments: Payment[]; total: number };
        return res.payments.find((p) => p.txid === payment.txid && p.block_height === height);
      },
      30_000,
      'the payment in GET /payments',
    );
    expect(listed).toMatchObject({ amount: 0.0005, address, block_height: height });

    node.mine(2);
    const detail = await eventually(
      async () => {
        const res = (await (await fetch(`http://127.0.0.1:${ports.payments}/payments/${encodeURIComponent(listed.id)}`)).json()) as {
          confirmations: number;
          status: string;
        };
        return res.confirmations === 3 ? res : undefined;
      },
      30_000,
      'three confirmations',
    );
    expect(detail).toMatchObject({ status: 'confirmed', confirmations: 3, txid: payment.txid, amount: 0.0005 });

    const events = await subscriber!.paymentEvents(payment.txid, blockHash, 'events on relay-b');
    expect(events.tx).toHaveLength(1);
    expect(events.tx[0]!.data).toMatchObject({ txid: payment.txid, amount: 0.0005, address, block_height: height });
    expect(events.block).toHaveLength(1);
    expect(events.block[0]!.data).toMatchObject({ block_height: height, block_hash: blockHash, silent_payments_found: 1 });
  });
});
