import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  createFundedWallet,
  makeSilentPayment,
  newSilentPaymentReceiver,
  startRegtestNode,
  type RegtestNode,
  type RegtestWallet,
} from '@repo/regtest';
import { encodeSilentPaymentAddress, labeledSpendPub } from '@repo/bip352';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { createSilentLogger } from '@repo/service';
import type { RpcBlock } from '../../../src/tweak-index/block-record';
import { createElectrumServers, ELECTRUM_LIMIT_DEFAULTS, type ElectrumServers } from '../../../src/tweak-index/electrum/server';
import { createTweakIndexer, type TweakIndexer } from '../../../src/tweak-index/indexer';
import { createSqliteIndexStore } from '../../../src/tweak-index/store-sqlite';
import { blockAt, followMempool, followNode } from '../../tweak-index/support/follow-node';
import { connectElectrum, type ElectrumTestClient } from '../../tweak-index/support/electrum-client';

const METHOD = 'blockchain.silentpayments.subscribe';
/** A notification as Frigate's README ("Electrum protocol") gives it: params `[subscription, progress, history]`. */
interface Note {
  subscription: { address: string; labels: number[]; start_height: number };
  progress: number;
  history: Array<{ height: number; tx_hash: string }>;
}
/** Each notified transaction's `tweak_key`, by txid (checked against the index in the test). */
const tweakKeys = new Map<string, string>();

/** The next notification, its entries' `tweak_key` kept aside. */
async function nextNote(c: ElectrumTestClient): Promise<Note> {
  const params = await c.nextParams(METHOD);
  expect(params).toHaveLength(3);
  const [subscription, progress, entries] = params as [
    Note['subscription'],
    number,
    Array<{ height: number; tx_hash: string; tweak_key: string }>,
  ];
  for (const e of entries) {
    expect(e.tweak_key).toMatch(/^0[23][0-9a-f]{64}$/);
    tweakKeys.set(e.tx_hash, e.tweak_key);
  }
  return { subscription, progress, history: entries.map(({ height, tx_hash }) => ({ height, tx_hash })) };
}
type Receiver = ReturnType<typeof newSilentPaymentReceiver>;
const params = (r: Receiver): [string, string] => [Buffer.from(r.scanPriv).toString('hex'), Buffer.from(r.spendPub).toString('hex')];
const labelled = (r: Receiver, m: number): string =>
  encodeSilentPaymentAddress(secp256k1.getPublicKey(r.scanPriv, true), labeledSpendPub(r.scanPriv, r.spendPub, m), 'regtest');

/** The history of a subscription up to progress 1.0, as the README says a client reads it. */
async function history(c: ElectrumTestClient): Promise<Note['history']> {
  const entries: Note['history'] = [];
  for (;;) {
    const note = await nextNote(c);
    expect(note.history.length).toBeLessThanOrEqual(100);
    entries.push(...note.history);
    if (note.progress === 1) return entries;
  }
}

/**
 * Remote scanning against a real Bitcoin Core (regtest), the client written from Frigate's README
 * alone (plain TCP JSON-RPC): wallets whose keys the service never saw get exactly their payments,
 * labelled and unlabelled, history first, then a new block's, then the rescan after a reorg.
 */
describe('remote scanning (Frigate’s methods) on a real regtest chain', () => {
  let node: RegtestNode;
  let wallet: RegtestWallet;
  let dir: string;
  let indexer: TweakIndexer;
  let electrum: ElectrumServers;
  let port: number;
  let start: number;
  const clients: ElectrumTestClient[] = [];

  const block = (height: number): Promise<RpcBlock> => blockAt(node, height);
  const follow = (): Promise<void> => followNode(indexer, node, start);
  const heightOf = async (txid: string): Promise<number> => {
    for (let h = await node.rpc<number>('getblockcount'); h >= start; h -= 1)
      if ((await block(h)).tx.some((t) => t.txid === txid)) return h;
    throw new Error(`${txid} is not mined`);
  };

  beforeAll(async () => {
    node = await startRegtestNode();
    wallet = await createFundedWallet(node, 'payer');
    start = (await node.rpc<number>('getblockcount')) + 1;
    dir = mkdtempSync(join(tmpdir(), 'sp-remote-real-'));
    const store = createSqliteIndexStore(join(dir, 'tweak-index.sqlite'));
    await store.open();
    indexer = createTweakIndexer(store, { startHeight: start });
    electrum = createElectrumServers({
      feed: {
        store: indexer.store,
        events: indexer.events,
        node: { call: async (method, args) => node.rpc(method, args) },
        mempool: indexer.mempool,
      },
      settings: {
        network: 'regtest',
        serverName: 'silent-payments-electrs test',
        startHeight: start,
        // Ten wallets restore at once from one address (the default allows four scans an address).
        limits: { ...ELECTRUM_LIMIT_DEFAULTS, maxScansPerIp: 10 },
      },
      logger: createSilentLogger(),
    });
    await new Promise<void>((resolve) => electrum.tcp.listen(0, '127.0.0.1', resolve));
    port = (electrum.tcp.address() as AddressInfo).port;
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await electrum?.close();
    await indexer?.store.close();
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let alice: ElectrumTestClient;
  let fourthPayment: Awaited<ReturnType<typeof makeSilentPayment>>;
  let fourthHeight: number;
  let orphaned: Awaited<ReturnType<typeof makeSilentPayment>>;

  it('ten wallets at once each get exactly their own payments; a mempool payment once, its confirmation by script hash; a new block’s; the rescan after a reorg', async () => {
    const receivers = Array.from({ length: 10 }, () => newSilentPaymentReceiver());
    const paid = new Map<number, string[]>();
    for (const [i, r] of receivers.entries()) {
      // Every wallet paid once; the even ones once more to their label 1 (which the odd ones do not ask for).
      const txids = [(await makeSilentPayment(node, wallet, { address: r.address, sats: 100_000n + BigInt(i) })).txid];
      if (i % 2 === 0)
        txids.push((await makeSilentPayment(node, wallet, { address: labelled(r, 1), sats: 50_000n, inputs: ['p2wpkh'] })).txid);
      paid.set(i, txids);
    }
    await wallet.mine(1);
    await follow();

    const expected = await Promise.all(
      receivers.map(async (_, i) =>
        Promise.all(paid.get(i)!.map(async (txid) => ({ height: await heightOf(txid), tx_hash: txid }))).then((entries) =>
          entries.sort((a, b) => a.height - b.height),
        ),
      ),
    );
    // All ten subscribe before any history is read.
    for (let i = 0; i < receivers.length; i += 1) clients.push(await connectElectrum(port));
    const results = await Promise.all(receivers.map((r, i) => clients[i]!.call(METHOD, [...params(r), start, i % 2 === 0 ? [1] : []])));
    expect(results).toEqual(receivers.map((r, i) => ({ address: r.address, labels: i % 2 === 0 ? [0, 1] : [0], start_height: start })));
    const histories = await Promise.all(clients.map((c) => history(c)));
    for (const [i, h] of histories.entries()) {
      const own = i % 2 === 0 ? expected[i]! : expected[i]!.filter((e) => e.tx_hash === paid.get(i)![0]);
      expect(new Set(h.map((e) => e.tx_hash))).toEqual(new Set(own.map((e) => e.tx_hash)));
      expect(h.map((e) => e.height)).toEqual([...h.map((e) => e.height)].sort((a, b) => a - b));
      expect(h).toHaveLength(own.length);
    }

    // Each tweak_key is the index's tweak of its transaction (input_hash·A, compressed).
    for (const h of histories.flat()) {
      const row = (await indexer.store.txs(h.height, h.height)).find((t) => t.txid === h.tx_hash);
      expect(tweakKeys.get(h.tx_hash)).toBe(Buffer.from(row!.tweak).toString('hex'));
    }

    // A payment to wallet 1 in the mempool: sent once at height 0; its confirmation comes by script hash.
    const pending = await makeSilentPayment(node, wallet, { address: receivers[1]!.address, sats: 77_000n });
    await follow();
    await followMempool(indexer, node);
    expect(await nextNote(clients[1]!)).toEqual({
      subscription: { address: receivers[1]!.address, labels: [0], start_height: start },
      progress: 1,
      history: [{ height: 0, tx_hash: pending.txid }],
    });
    expect(tweakKeys.get(pending.txid)).toBe(Buffer.from(indexer.mempool.get(pending.txid)!.tweak).toString('hex'));
    const pendingHash = createHash('sha256')
      .update(Buffer.from(`5120${pending.outputKey}`, 'hex'))
      .digest()
      .reverse()
      .toString('hex');
    const statusAt = (height: number): string => createHash('sha256').update(`${pending.txid}:${height}:`).digest('hex');
    expect(await clients[1]!.call('blockchain.scripthash.subscribe', [pendingHash])).toBe(statusAt(0));
    await followMempool(indexer, node); // seen already: not sent again
    await wallet.mine(1);
    await follow();
    const confirmedAt = await heightOf(pending.txid);
    expect(await clients[1]!.nextParams('blockchain.scripthash.subscribe')).toEqual([pendingHash, statusAt(confirmedAt)]);
    expect(await clients[1]!.call('blockchain.scripthash.listunspent', [pendingHash])).toEqual([
      { tx_hash: pending.txid, tx_pos: pending.vout, height: confirmedAt, value: 77_000 },
    ]);

    // A new block pays wallet 0: only its connection hears of it.
    alice = clients[0]!;
    const third = await makeSilentPayment(node, wallet, { address: receivers[0]!.address, sats: 333_000n, confirmInputs: false });
    const fourth = await makeSilentPayment(node, wallet, { address: receivers[0]!.address, sats: 444_000n, confirmInputs: false });
    const mineOnly = async (txs: string[]): Promise<string> =>
      (await node.rpc<{ hash: string }>('generateblock', [await wallet.newAddress('bech32'), txs])).hash;
    await mineOnly([...third.coins, ...fourth.coins].map((c) => c.txHex));
    const orphan = await mineOnly([third.hex]);
    await follow();
    const height = await node.rpc<number>('getblockcount');
    expect(await nextNote(alice)).toEqual({
      subscription: { address: receivers[0]!.address, labels: [0, 1], start_height: start },
      progress: 1,
      history: [{ height, tx_hash: third.txid }],
    });

    // A reorg replaces that block by one with the fourth payment: the rescan from the fork finds it.
    await node.rpc('invalidateblock', [orphan]);
    await mineOnly([fourth.hex]);
    await follow();
    expect((await nextNote(alice)).history).toEqual([{ height, tx_hash: fourth.txid }]);
    fourthPayment = fourth;
    orphaned = third;
    fourthHeight = height;
    // The others heard nothing: a notification sent before the ping's answer would arrive before it.
    for (const c of clients.slice(1)) {
      let heard = false;
      void c.nextParams(METHOD).then(() => (heard = true));
      await c.call('server.ping');
      expect(heard).toBe(false);
    }
  });

  it('serves what the wallet needs next: its transactions, their merkle proofs, fees, headers, broadcast and its outputs’ script hashes', async () => {
    const fourth = fourthPayment;
    expect(await alice.call('blockchain.transaction.get', [fourth.txid])).toBe(fourth.hex);
    expect(await alice.call('blockchain.transaction.get', [fourth.txid, true])).toMatchObject({ txid: fourth.txid, hex: fourth.hex });
    const proof = await alice.call<{ block_height: number; merkle: string[]; pos: number }>('blockchain.transaction.get_merkle', [
      fourth.txid,
      fourthHeight,
    ]);
    const header = await node.rpc<{ merkleroot: string }>('getblockheader', [await node.rpc<string>('getblockhash', [fourthHeight])]);
    const sha256d = (b: Buffer): Buffer => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();
    let root: Buffer = Buffer.from(fourth.txid, 'hex').reverse();
    for (const [i, sibling] of proof.merkle.entries()) {
      const other = Buffer.from(sibling, 'hex').reverse();
      root = (proof.pos >> i) & 1 ? sha256d(Buffer.concat([other, root])) : sha256d(Buffer.concat([root, other]));
    }
    expect(Buffer.from(root).reverse().toString('hex')).toBe(header.merkleroot);
    expect(proof.block_height).toBe(fourthHeight);

    const headers = await alice.call<{ count: number; hex: string; max: number }>('blockchain.block.headers', [fourthHeight - 1, 5]);
    expect(headers.count).toBe(2);
    expect(headers.hex.slice(160)).toBe(
      await node.rpc<string>('getblockheader', [await node.rpc<string>('getblockhash', [fourthHeight]), false]),
    );
    expect(await alice.call('blockchain.relayfee')).toBe((await node.rpc<{ relayfee: number }>('getnetworkinfo', [])).relayfee);
    expect(typeof (await alice.call('blockchain.estimatefee', [6]))).toBe('number');
    // The orphaned payment (back in the node's mempool) broadcast again answers its txid; garbage gets the node's refusal.
    expect(await alice.call('blockchain.transaction.broadcast', [orphaned.hex])).toBe(orphaned.txid);
    await expect(alice.call('blockchain.transaction.broadcast', ['00'])).rejects.toMatchObject({ code: -32003 });

    // The payment's output, by Electrum's script hash (sha256 of the script, reversed).
    const hash = createHash('sha256')
      .update(Buffer.from(`5120${fourth.outputKey}`, 'hex'))
      .digest()
      .reverse()
      .toString('hex');
    expect(await alice.call('blockchain.scripthash.get_history', [hash])).toEqual([{ tx_hash: fourth.txid, height: fourthHeight }]);
    expect(await alice.call('blockchain.scripthash.get_balance', [hash])).toEqual({ confirmed: 444_000, unconfirmed: 0 });
    expect(await alice.call('blockchain.scripthash.listunspent', [hash])).toEqual([
      { tx_hash: fourth.txid, tx_pos: fourth.vout, height: fourthHeight, value: 444_000 },
    ]);
    expect(typeof (await alice.call('blockchain.scripthash.subscribe', [hash]))).toBe('string');
    // Another connection did not find it; nor is any other script hash served.
    await expect(clients[1]!.call('blockchain.scripthash.get_history', [hash])).rejects.toMatchObject({ code: -32002 });
    await expect(alice.call('blockchain.scripthash.get_balance', ['ab'.repeat(32)])).rejects.toMatchObject({ code: -32002 });
  });
});
