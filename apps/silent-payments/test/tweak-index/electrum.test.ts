import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createSilentLogger, generateSelfSignedCertificate } from '@repo/service';
import type { TweakIndexerEvents } from '../../src/tweak-index/indexer';
import { createElectrumServers, ELECTRUM_LIMIT_DEFAULTS, type ElectrumServers } from '../../src/tweak-index/electrum/server';
import type { ElectrumLimits } from '../../src/tweak-index/electrum/protocol';
import { createSqliteIndexStore } from '../../src/tweak-index/store-sqlite';
import type { TweakIndexStore } from '../../src/tweak-index/store';
import { connectElectrum, RpcFailure, type ElectrumTestClient } from './support/electrum-client';
import { bytes, hex, record } from './support/records';

type HeightRecord = Record<string, Record<string, { tweak: string; output_pubkeys: Record<string, [string, number]> }>>;

describe('the Electrum server (blockchain.tweaks.subscribe as Cake Wallet reads it)', () => {
  let dir: string;
  let store: TweakIndexStore;
  let events: EventEmitter<TweakIndexerEvents>;
  let servers: ElectrumServers;
  let port: number;
  let tlsPort: number;
  let ca: string;
  const clients: ElectrumTestClient[] = [];

  const start = async (limits: Partial<ElectrumLimits> = {}): Promise<void> => {
    await servers?.close();
    const certificate = await generateSelfSignedCertificate(['localhost']);
    ca = certificate.cert;
    servers = createElectrumServers({
      feed: { store, events },
      settings: {
        network: 'regtest',
        serverName: 'silent-payments-electrs 1.0.0',
        startHeight: 10,
        limits: { ...ELECTRUM_LIMIT_DEFAULTS, ...limits },
      },
      logger: createSilentLogger(),
      tls: certificate,
    });
    await new Promise<void>((resolve) => servers.tcp.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => servers.tls!.listen(0, '127.0.0.1', resolve));
    port = (servers.tcp.address() as AddressInfo).port;
    tlsPort = (servers.tls!.address() as AddressInfo).port;
  };
  const client = async (): Promise<ElectrumTestClient> => {
    const c = await connectElectrum(port);
    clients.push(c);
    return c;
  };
  const addBlock = async (height: number, spends: Array<{ txid: string; vout: number; outHeight: number }> = []): Promise<void> => {
    await store.applyBlock(record(height, spends));
    events.emit('block', height, hex(32, height));
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-electrum-'));
    store = createSqliteIndexStore(join(dir, 'index.sqlite'));
    await store.open();
    events = new EventEmitter();
    for (const h of [10, 11, 12]) await store.applyBlock(record(h, h === 12 ? [{ txid: hex(32, 110), vout: 0, outHeight: 10 }] : []));
    await start();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    await servers.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers server.version (naming electrs, as Cake checks), server.features with the genesis hash, and server.ping', async () => {
    const c = await client();
    const [name, version] = await c.call<[string, string]>('server.version', ['cake', '1.4']);
    expect(name.toLowerCase()).toContain('electrs');
    expect(version).toBe('1.4');
    expect(await c.call('server.features')).toMatchObject({
      genesis_hash: '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206',
      silent_payments: [0],
    });
    expect(await c.call('server.ping')).toBeNull();
  });

  it('serves headers by height and pushes the new tip to header subscribers', async () => {
    const c = await client();
    expect(await c.call('blockchain.block.header', [11])).toBe(Buffer.from(bytes(80, 11)).toString('hex'));
    await expect(c.call('blockchain.block.header', [99])).rejects.toMatchObject({ code: -32001 });
    await expect(c.call('blockchain.block.header', [-1])).rejects.toMatchObject({ code: -32602 });
    expect(await c.call('blockchain.headers.subscribe')).toEqual({ height: 12, hex: Buffer.from(bytes(80, 12)).toString('hex') });
    const pushed = c.next('blockchain.headers.subscribe');
    await addBlock(13);
    expect(await pushed).toEqual({ height: 13, hex: Buffer.from(bytes(80, 13)).toString('hex') });
    await store.rollback(13);
    events.emit('rollback', 13);
  });

  it('streams tweaks: the first height as the result, one notification per height, then done; historical keeps spent outputs', async () => {
    const c = await client();
    const first = await c.call<HeightRecord>('blockchain.tweaks.subscribe', [10, 3, true]);
    expect(Object.keys(first)).toEqual(['10']);
    expect(first['10']![hex(32, 110)]).toEqual({
      tweak: Buffer.from(bytes(33, 2)).toString('hex'),
      output_pubkeys: { '0': [hex(32, 7), 1000], '2': [hex(32, 8), 2_100_000_000_000_000] },
    });
    expect(Object.keys((await c.next<HeightRecord>('blockchain.tweaks.subscribe'))['11']!)).toHaveLength(2);
    expect(Object.keys((await c.next<HeightRecord>('blockchain.tweaks.subscribe'))['12']!)).toHaveLength(2);
    expect(await c.next('blockchain.tweaks.subscribe')).toEqual({ message: 'done' });
  });

  it('cuts through by default: outputs spent by an indexed block are left out', async () => {
    const c = await client();
    const first = await c.call<HeightRecord>('blockchain.tweaks.subscribe', [10, 1, false]);
    expect(first['10']![hex(32, 110)]!.output_pubkeys).toEqual({ '2': [hex(32, 8), 2_100_000_000_000_000] });
    expect(await c.next('blockchain.tweaks.subscribe')).toEqual({ message: 'done' });
  });

  it("answers Cake's probe [0, 1, false] with an empty first height, and waits for heights not indexed yet", async () => {
    const c = await client();
    expect(await c.call('blockchain.tweaks.subscribe', [0, 1, false])).toEqual({ '0': {} });
    expect(await c.next('blockchain.tweaks.subscribe')).toEqual({ message: 'done' });
    const first = await c.call<HeightRecord>('blockchain.tweaks.subscribe', [12, 2, true]);
    expect(Object.keys(first)).toEqual(['12']);
    const pushed = c.next<HeightRecord>('blockchain.tweaks.subscribe');
    await addBlock(13);
    expect(Object.keys((await pushed)['13']!)).toHaveLength(2);
    expect(await c.next('blockchain.tweaks.subscribe')).toEqual({ message: 'done' });
    await store.rollback(13);
    events.emit('rollback', 13);
  });

  it('after a reorg sends the heights of the new branch again to an open subscription', async () => {
    const c = await client();
    expect(Object.keys(await c.call<HeightRecord>('blockchain.tweaks.subscribe', [12, 2, true]))).toEqual(['12']);
    // Block 12 is replaced by one whose transactions differ (another txid, no spend).
    await store.rollback(12);
    events.emit('rollback', 12);
    const replacement = { ...record(12), hash: hex(32, 0xee) };
    replacement.txs = [{ ...replacement.txs[0]!, txid: hex(32, 0xef) }];
    await store.applyBlock(replacement);
    events.emit('block', 12, replacement.hash);
    expect(Object.keys((await c.next<HeightRecord>('blockchain.tweaks.subscribe'))['12']!)).toEqual([hex(32, 0xef)]);
    await addBlock(13);
    expect(Object.keys(await c.next<HeightRecord>('blockchain.tweaks.subscribe'))).toEqual(['13']);
    expect(await c.next('blockchain.tweaks.subscribe')).toEqual({ message: 'done' });
    await store.rollback(12);
    events.emit('rollback', 12);
    await store.applyBlock(record(12, [{ txid: hex(32, 110), vout: 0, outHeight: 10 }]));
  });

  it('answers bad requests with JSON-RPC errors and keeps the connection', async () => {
    const c = await client();
    c.writeRaw('this is not json\n');
    c.writeRaw('[{"id":1,"method":"server.ping"}]\n');
    await expect(c.call('no.such.method')).rejects.toMatchObject({ code: -32601 });
    await expect(c.call('blockchain.tweaks.subscribe', ['x'])).rejects.toBeInstanceOf(RpcFailure);
    await expect(c.call('blockchain.tweaks.subscribe', [10, 0])).rejects.toMatchObject({ code: -32602 });
    await expect(c.call('blockchain.tweaks.subscribe', [10, 1, 'yes'])).rejects.toMatchObject({ code: -32602 });
    expect(c.stray).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'the line is not JSON' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'a request is one JSON object (batches are not served)' } },
    ]);
    expect(await c.call('server.ping')).toBeNull();
  });

  it('refuses a subscription past the per-connection limit, a line past the size limit, and a connection past the per-address limit', async () => {
    await start({ maxSubscriptions: 1, maxLineBytes: 1024, maxConnectionsPerIp: 2 });
    const c = await client();
    await c.call('blockchain.tweaks.subscribe', [12, 5, false]);
    await expect(c.call('blockchain.tweaks.subscribe', [12, 1, false])).rejects.toMatchObject({ code: -32000 });

    const second = await client();
    const third = await client();
    await third.ended;
    expect(third.stray).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'more than 2 connections from this address' } },
    ]);
    second.writeRaw(`${'x'.repeat(2048)}\n`);
    await second.ended;
    expect(second.stray).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request line longer than 1024 bytes' } }]);
    await start();
  });

  it('refuses a request past the pending limit with an answer, the connection open (subscriptions waiting for a block stay pending)', async () => {
    await start({ maxPending: 2 });
    const c = await client();
    // Never answered: the two heights are not indexed (the connection's close ends their wait on the server).
    void c.call('blockchain.tweaks.subscribe', [20, 1, true]);
    void c.call('blockchain.tweaks.subscribe', [21, 1, true]);
    await expect(c.call('server.ping')).rejects.toMatchObject({ code: -32000, message: 'more than 2 requests pending' });
    // Still open: the refusal is an answer, and the next refused request gets one too.
    await expect(c.call('server.ping')).rejects.toMatchObject({ code: -32000 });
    await start();
  });

  it('serves the same methods over TLS', async () => {
    const c = await connectElectrum(tlsPort, { ca });
    clients.push(c);
    expect(await c.call('blockchain.tweaks.subscribe', [11, 1, true])).toHaveProperty('11');
  });
});
