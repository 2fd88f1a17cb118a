import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import {
  createFundedWallet,
  makeSilentPayment,
  newSilentPaymentReceiver,
  startRegtestNode,
  type RegtestNode,
  type RegtestWallet,
} from '@repo/regtest';
import { createReceiver, scanInputsFromRpc, scanOutputsFromRpc } from '@repo/bip352';
import { createSilentLogger } from '@repo/service';
import type { RpcBlock } from '../../../src/tweak-index/block-record';
import { createElectrumServers, ELECTRUM_LIMIT_DEFAULTS, type ElectrumServers } from '../../../src/tweak-index/electrum/server';
import { createOracleGrpcServer } from '../../../src/tweak-index/grpc/oracle-service';
import { createTweakIndexer, type TweakIndexer } from '../../../src/tweak-index/indexer';
import { createSqliteIndexStore } from '../../../src/tweak-index/store-sqlite';
import { blockAt, followNode } from '../../tweak-index/support/follow-node';
import { connectElectrum } from '../../tweak-index/support/electrum-client';
import { gcsMatches } from '../../tweak-index/support/gcs-reader';
import { scanWithTweak } from '../../tweak-index/support/light-client';
import { connectOracle, type OracleTestClient } from '../../tweak-index/support/oracle-client';

type Found = string; // "txid:vout:sats"

/**
 * Light wallets synced from the index alone, against a real Bitcoin Core (regtest): the service
 * does not know the wallet's keys; the wallets use only the protocols (the .proto through
 * grpc-js's dynamic loader, a plain TCP JSON-RPC client) and find exactly what a full scan of the
 * same blocks finds, with amounts, before and after a reorg.
 */
describe('light wallets synced from the tweak index of a real regtest chain', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  let dir: string;
  let indexer: TweakIndexer;
  let electrum: ElectrumServers;
  let grpcServer: grpc.Server;
  let oracle: OracleTestClient;
  let electrumPort: number;
  let start: number;
  const receiver = newSilentPaymentReceiver();

  const block = (height: number): Promise<RpcBlock> => blockAt(node, height);
  const follow = (): Promise<void> => followNode(indexer, node, start);

  /** What a full scan of the blocks (every input, with the wallet's keys) finds. */
  const fullScan = async (): Promise<Found[]> => {
    const full = createReceiver({ scanPriv: receiver.scanPriv, spendPub: receiver.spendPub });
    const found: Found[] = [];
    for (let h = start; h <= (await node.rpc<number>('getblockcount')); h += 1) {
      for (const tx of (await block(h)).tx.slice(1)) {
        const { outputs, values } = scanOutputsFromRpc(tx.vout);
        for (const hit of full.scanTransaction(scanInputsFromRpc(tx.vin), outputs)) {
          found.push(`${tx.txid}:${hit.index}:${Math.round(values[outputs.findIndex((o) => o.index === hit.index)]! * 1e8)}`);
        }
      }
    }
    return found.sort();
  };

  /** Cake Wallet's way: one blockchain.tweaks.subscribe over the whole range, then its own scan. */
  const electrumScan = async (): Promise<Found[]> => {
    const c = await connectElectrum(electrumPort);
    try {
      const tip = (await c.call<{ height: number }>('blockchain.headers.subscribe')).height;
      const pages = [
        await c.call<Record<string, Record<string, { tweak: string; output_pubkeys: Record<string, [string, number]> }>>>(
          'blockchain.tweaks.subscribe',
          [start, tip - start + 1, true],
        ),
      ];
      for (;;) {
        const page = await c.next<(typeof pages)[number] & { message?: string }>('blockchain.tweaks.subscribe');
        if (page.message === 'done') break;
        pages.push(page);
      }
      expect(pages.map((p) => Number(Object.keys(p)[0]))).toEqual(Array.from({ length: tip - start + 1 }, (_, i) => start + i));
      const found: Found[] = [];
      for (const page of pages) {
        for (const txs of Object.values(page)) {
          for (const [txid, { tweak, output_pubkeys }] of Object.entries(txs)) {
            const byKey = new Map(Object.entries(output_pubkeys).map(([vout, [key, sats]]) => [key, `${txid}:${vout}:${sats}`]));
            for (const key of scanWithTweak(receiver.scanPriv, receiver.spendPub, Buffer.from(tweak, 'hex'), (x) => byKey.has(x)))
              found.push(byKey.get(key)!);
          }
        }
      }
      return found.sort();
    } finally {
      c.close();
    }
  };

  /** BlindBit's way: slim batches (tweaks and the new-outputs filter), then the UTXOs of the blocks whose filter matches. */
  const blindbitScan = async (): Promise<Found[]> => {
    const tip = (await oracle.call<{ block_height: number }>('GetBestBlockHeight')).block_height;
    const batches = await oracle.stream<{
      block_identifier: { block_hash: Buffer; block_height: number };
      tweaks: Buffer[];
      new_utxos_filter: { data: Buffer };
    }>('StreamBlockBatchSlimStatic', { start, end: tip });
    expect(batches.map((b) => b.block_identifier.block_height)).toEqual(Array.from({ length: tip - start + 1 }, (_, i) => start + i));
    const found: Found[] = [];
    for (const batch of batches) {
      const key = Uint8Array.from(Buffer.from(batch.block_identifier.block_hash).reverse().subarray(0, 16));
      const maybe = batch.tweaks.filter(
        (t) =>
          scanWithTweak(receiver.scanPriv, receiver.spendPub, t, (x) => gcsMatches(batch.new_utxos_filter.data, key, Buffer.from(x, 'hex')))
            .length > 0,
      );
      if (maybe.length === 0) continue;
      const { utxos } = await oracle.call<{ utxos: Array<{ txid: Buffer; vout: number; value: number; script_pub_key: Buffer }> }>(
        'GetUTXOArray',
        {
          block_height: batch.block_identifier.block_height,
        },
      );
      const byKey = new Map(
        utxos.map((u) => [u.script_pub_key.subarray(2).toString('hex'), `${u.txid.toString('hex')}:${u.vout}:${u.value}`]),
      );
      for (const t of maybe)
        for (const k of scanWithTweak(receiver.scanPriv, receiver.spendPub, t, (x) => byKey.has(x))) found.push(byKey.get(k)!);
    }
    return found.sort();
  };

  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node, 'payer');
    start = (await node.rpc<number>('getblockcount')) + 1;
    dir = mkdtempSync(join(tmpdir(), 'sp-light-'));
    const store = createSqliteIndexStore(join(dir, 'tweak-index.sqlite'));
    await store.open();
    indexer = createTweakIndexer(store, { startHeight: start });
    electrum = createElectrumServers({
      feed: indexer,
      settings: { network: 'regtest', serverName: 'silent-payments-electrs test', startHeight: start, limits: ELECTRUM_LIMIT_DEFAULTS },
      logger: createSilentLogger(),
    });
    await new Promise<void>((resolve) => electrum.tcp.listen(0, '127.0.0.1', resolve));
    electrumPort = (electrum.tcp.address() as AddressInfo).port;
    grpcServer = createOracleGrpcServer({ store, network: 'regtest', logger: createSilentLogger() });
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    oracle = connectOracle(port);
  }, 120_000);
  afterAll(async () => {
    oracle?.close();
    await new Promise<void>((resolve) => (grpcServer ? grpcServer.tryShutdown(() => resolve()) : resolve()));
    await electrum?.close();
    await indexer?.store.close();
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds exactly the payments of a full scan, with amounts; after a reorg the new ones and not the orphaned ones', async () => {
    // Payments to the wallet among other traffic (taproot outputs of the payer's own).
    const first = await makeSilentPayment(node, wallet, { address: receiver.address, sats: 150_000n });
    await wallet.fund(await wallet.newAddress('bech32m'), 70_000n);
    const second = await makeSilentPayment(node, wallet, { address: receiver.address, sats: 260_000n, inputs: ['p2wpkh'] });
    await wallet.mine(1);
    // The third payment and the fourth (which will replace it in a reorg): inputs confirmed together, then the third mined alone.
    const third = await makeSilentPayment(node, wallet, {
      address: receiver.address,
      sats: 333_000n,
      inputs: ['p2tr'],
      confirmInputs: false,
    });
    const fourth = await makeSilentPayment(node, wallet, { address: receiver.address, sats: 444_000n, confirmInputs: false });
    const mineOnly = async (txs: string[]): Promise<string> =>
      (await node.rpc<{ hash: string }>('generateblock', [await wallet.newAddress('bech32'), txs])).hash;
    await mineOnly([...third.coins, ...fourth.coins].map((c) => c.txHex));
    const orphanHash = await mineOnly([third.hex]);
    await follow();

    const before = await fullScan();
    expect(before).toEqual([`${first.txid}:0:150000`, `${second.txid}:0:260000`, `${third.txid}:0:333000`].sort());
    expect(await electrumScan()).toEqual(before);
    expect(await blindbitScan()).toEqual(before);

    // A reorg: the block with the third payment is replaced by one with the fourth instead.
    await node.rpc('invalidateblock', [orphanHash]);
    await mineOnly([fourth.hex]);
    await follow();

    const after = await fullScan();
    expect(after).toEqual([`${first.txid}:0:150000`, `${second.txid}:0:260000`, `${fourth.txid}:0:444000`].sort());
    expect(await electrumScan()).toEqual(after);
    expect(await blindbitScan()).toEqual(after);
  });
});
