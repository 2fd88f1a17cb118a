import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createSilentLogger } from '@repo/service';
import { spentOutpointHashes } from '../../src/tweak-index/block-record';
import { createOracleGrpcServer } from '../../src/tweak-index/grpc/oracle-service';
import { createSqliteIndexStore } from '../../src/tweak-index/store-sqlite';
import type { TweakIndexStore } from '../../src/tweak-index/store';
import { connectOracle, type OracleTestClient } from './support/oracle-client';
import { bytes, hex, record } from './support/records';

interface Batch {
  block_identifier: { block_hash: Buffer; block_height: number };
  tweaks: Buffer[];
  utxos?: Array<{
    txid: Buffer;
    vout: number;
    value: number;
    script_pub_key: Buffer;
    spent: boolean;
    block_height: number;
    timestamp: number;
  }>;
  new_utxos_filter: { filter_type: string; data: Buffer; blockhash: Buffer };
  spent_utxos_filter: { filter_type: string; data: Buffer };
  spent_utxos?: Buffer[];
}

describe('the BlindBit OracleService over gRPC', () => {
  let dir: string;
  let store: TweakIndexStore;
  let server: grpc.Server;
  let client: OracleTestClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-grpc-'));
    store = createSqliteIndexStore(join(dir, 'index.sqlite'));
    await store.open();
    await store.applyBlock(record(10));
    await store.applyBlock(record(11));
    // Block 12 spends both outputs of the first transaction of block 10.
    await store.applyBlock(
      record(12, [
        { txid: hex(32, 110), vout: 0, outHeight: 10 },
        { txid: hex(32, 110), vout: 2, outHeight: 10 },
      ]),
    );
    for (let h = 13; h <= 35; h += 1) await store.applyBlock(record(h));
    server = createOracleGrpcServer({ store, network: 'regtest', logger: createSilentLogger(), maxRange: 30 });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
    );
    client = connectOracle(port);
  });
  afterAll(async () => {
    client.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers GetInfo, GetBestBlockHeight and GetBlockHashByHeight', async () => {
    expect(await client.call('GetInfo')).toMatchObject({
      network: 'regtest',
      height: 35,
      tweaks_full_basic: true,
      tweaks_full_with_dust_filter: true,
    });
    expect(await client.call('GetBestBlockHeight')).toEqual({ block_height: 35 });
    expect(await client.call('GetBlockHashByHeight', { block_height: 11 })).toEqual({ block_hash: Buffer.from(hex(32, 11), 'hex') });
  });

  it('serves the tweaks: all with the tweak index (dust limit on the largest output), cut through with GetTweakArray', async () => {
    const all = await client.call<{ tweaks: Buffer[] }>('GetTweakIndexArray', { block_height: 10, dust_limit: 0 });
    expect(all.tweaks).toEqual([Buffer.from(bytes(33, 2)), Buffer.from(bytes(33, 3))]);
    const dusted = await client.call<{ tweaks: Buffer[] }>('GetTweakIndexArray', { block_height: 10, dust_limit: 1_000_000 });
    expect(dusted.tweaks).toEqual([Buffer.from(bytes(33, 2))]);
    const cut = await client.call<{ tweaks: Buffer[] }>('GetTweakArray', { block_height: 10 });
    expect(cut.tweaks).toEqual([Buffer.from(bytes(33, 3))]);
  });

  it('serves UTXOs with amounts and spent flags, filters and the spent outpoints index', async () => {
    const { utxos } = await client.call<{ utxos: NonNullable<Batch['utxos']> }>('GetUTXOArray', { block_height: 10 });
    expect(utxos.map((u) => [u.txid.toString('hex'), u.vout, u.value, u.spent])).toEqual([
      [hex(32, 110), 0, 1000, true],
      [hex(32, 110), 2, 2_100_000_000_000_000, true],
      [hex(32, 210), 1, 546, false],
    ]);
    expect(utxos[0]!.script_pub_key).toEqual(Buffer.concat([Buffer.from('5120', 'hex'), Buffer.from(bytes(32, 7))]));
    const filter = await client.call<{ filter_data: { filter_type: string; data: Buffer } }>('GetFilter', {
      block_height: 10,
      filter_type: 'FILTER_TYPE_NEW_UTXOS',
    });
    expect(filter.filter_data).toMatchObject({ filter_type: 'FILTER_TYPE_NEW_UTXOS', data: Buffer.from(bytes(5, 1)) });
    const spent = await client.call<{ data: Buffer[] }>('GetSpentOutpointsIndex', { block_height: 12 });
    expect(spent.data).toEqual(
      spentOutpointHashes(
        [
          { txid: hex(32, 110), vout: 0 },
          { txid: hex(32, 110), vout: 2 },
        ],
        hex(32, 12),
      ).map((h) => Buffer.from(h)),
    );
  });

  it('streams slim and full batches over a range, cut through or static', async () => {
    const slim = await client.stream<Batch>('StreamBlockBatchSlim', { start: 10, end: 11 });
    expect(slim.map((b) => b.block_identifier.block_height)).toEqual([10, 11]);
    expect(slim[0]!.tweaks).toHaveLength(1);
    expect(slim[0]!.new_utxos_filter.filter_type).toBe('FILTER_TYPE_NEW_UTXOS');
    expect(slim[0]!.spent_utxos_filter.filter_type).toBe('FILTER_TYPE_SPENT');
    const staticSlim = await client.stream<Batch>('StreamBlockBatchSlimStatic', { start: 10, end: 10 });
    expect(staticSlim[0]!.tweaks).toHaveLength(2);
    const full = await client.stream<Batch>('StreamBlockBatchFullStatic', { start: 11, end: 12 });
    expect(full.map((b) => [b.utxos!.length, b.spent_utxos!.length])).toEqual([
      [3, 0],
      [3, 2],
    ]);
    expect((await client.stream<Batch>('StreamBlockBatchFull', { start: 12, end: 12 }))[0]!.tweaks).toHaveLength(2);
    // Longer than the pages the server reads the store in: every height once, in order.
    const long = await client.stream<Batch>('StreamBlockBatchSlimStatic', { start: 10, end: 35 });
    expect(long.map((b) => b.block_identifier.block_height)).toEqual(Array.from({ length: 26 }, (_, i) => 10 + i));
  });

  it('answers INVALID_ARGUMENT for a bad range or filter type and NOT_FOUND for a height not indexed', async () => {
    await expect(client.stream('StreamBlockBatchSlim', { start: 11, end: 10 })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(client.stream('StreamBlockBatchFull', { start: 10, end: 40 })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'at most 30 blocks per request',
    });
    await expect(client.stream('StreamBlockBatchSlim', { start: 35, end: 36 })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: 'height 36 is not indexed',
    });
    await expect(client.stream('StreamBlockBatchSlim', { start: 9, end: 10 })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: 'height 9 is not indexed',
    });
    await expect(client.call('GetTweakArray', { block_height: 9 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(client.call('GetBlockHashByHeight', { block_height: 99 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(client.call('GetFilter', { block_height: 10 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });
});
