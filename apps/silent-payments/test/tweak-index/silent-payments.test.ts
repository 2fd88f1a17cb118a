import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { encodeSilentPaymentAddress } from '@repo/bip352';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { createMemoryLogger, type LogRecord } from '@repo/service';
import type { TweakIndexerEvents } from '../../src/tweak-index/indexer';
import { createElectrumServers, ELECTRUM_LIMIT_DEFAULTS, type ElectrumServers } from '../../src/tweak-index/electrum/server';
import type { ElectrumLimits } from '../../src/tweak-index/electrum/protocol';
import type { BlockRecord, IndexedTx } from '../../src/tweak-index/block-record';
import { createSqliteIndexStore } from '../../src/tweak-index/store-sqlite';
import type { StoredTx, TweakIndexStore } from '../../src/tweak-index/store';
import type { MempoolIndex } from '../../src/tweak-index/mempool';
import { PAGE_HEIGHTS } from '../../src/tweak-index/remote-scan/subscription';
import { connectElectrum, type ElectrumTestClient } from './support/electrum-client';
import { blockOf, newWallet, otherTx, payingTx, txidOf, type TestWallet } from './support/sp-wallets';

const METHOD = 'blockchain.silentpayments.subscribe';
interface Subscribed {
  address: string;
  labels: number[];
  start_height: number;
}
interface Note {
  subscription: Subscribed;
  progress: number;
  history: Array<{ height: number; tx_hash: string }>;
}

/** The tweak (hex) of each transaction made by the tests, by txid: what `tweak_key` must say. */
const tweaks = new Map<string, string>();
/** {@link payingTx}, its tweak remembered. */
function paying(...args: Parameters<typeof payingTx>): IndexedTx {
  const tx = payingTx(...args);
  tweaks.set(tx.txid, Buffer.from(tx.tweak).toString('hex'));
  return tx;
}

/**
 * The next notification as Frigate's README gives it: params `[subscription, progress, history]`,
 * each history entry `{height, tx_hash, tweak_key}` with the transaction's tweak; returned with the
 * entries' tweak checked and left out.
 */
async function nextNote(c: ElectrumTestClient): Promise<Note> {
  const params = await c.nextParams(METHOD);
  expect(params).toHaveLength(3);
  const [subscription, progress, history] = params as [Subscribed, number, Array<{ height: number; tx_hash: string; tweak_key: string }>];
  for (const entry of history) {
    expect(Object.keys(entry).sort()).toEqual(['height', 'tweak_key', 'tx_hash']);
    expect(entry.tweak_key).toBe(tweaks.get(entry.tx_hash));
  }
  return { subscription, progress, history: history.map(({ height, tx_hash }) => ({ height, tx_hash })) };
}

/** Reads notifications up to the first with progress 1.0: each page at most 100 entries, the earlier ones below 1.0. */
async function historyOf(c: ElectrumTestClient): Promise<{ notes: Note[]; history: Note['history'] }> {
  const notes: Note[] = [];
  for (;;) {
    const note = await nextNote(c);
    notes.push(note);
    expect(note.history.length).toBeLessThanOrEqual(100);
    if (note.progress === 1) break;
    expect(note.progress).toBeLessThan(1);
  }
  return { notes, history: notes.flatMap((n) => n.history) };
}

/** The script hash Electrum gives the taproot output of x-only key `xonly`. */
const taprootHash = (xonly: Uint8Array): string =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from('5120', 'hex'), xonly]))
    .digest()
    .reverse()
    .toString('hex');

/** A status hash as Electrum computes it from `tx:height:` entries in history order. */
const statusOf = (...entries: Array<[string, number]>): string =>
  createHash('sha256')
    .update(entries.map(([txid, height]) => `${txid}:${height}:`).join(''))
    .digest('hex');

/** A mempool index in memory whose transactions the test puts in (`enter`, with the indexer's event) and takes out (`leave`). */
function testMempool(events: EventEmitter<TweakIndexerEvents>) {
  const held = new Map<string, StoredTx>();
  const counts = { wholeReads: 0 };
  const mempool: MempoolIndex = {
    add: () => [],
    keep: () => [],
    mined: (txids) => {
      for (const txid of txids) held.delete(txid);
    },
    rows: () => {
      counts.wholeReads += 1;
      return [...held.values()];
    },
    get: (txid) => held.get(txid),
    has: (txid) => held.has(txid),
  };
  const hold = (tx: IndexedTx): void => {
    held.set(tx.txid, { height: 0, ...tx, outputs: tx.outputs.map((o) => ({ ...o, spentHeight: null })) });
  };
  return {
    mempool,
    counts,
    hold,
    enter(...txs: IndexedTx[]): void {
      txs.forEach(hold);
      events.emit(
        'mempool',
        txs.map((tx) => tx.txid),
      );
    },
    /** The transaction left unmined (replaced or evicted): the indexer's `mempool-gone`. */
    leave(tx: IndexedTx): void {
      held.delete(tx.txid);
      events.emit('mempool-gone', [tx.txid]);
    },
    /** Mined in the block that follows: out of the mempool with no event. */
    mined(tx: IndexedTx): void {
      held.delete(tx.txid);
    },
  };
}

/** Whether a notification of `method` arrived before the answer to a ping sent now (the server writes in order). */
async function notifiedBeforePing(c: ElectrumTestClient, method: string): Promise<boolean> {
  await c.call('server.ping');
  return c.queued(method) > 0;
}

const addressOf = (w: TestWallet): string => encodeSilentPaymentAddress(secp256k1.getPublicKey(w.scanPriv, true), w.spendPub, 'regtest');

describe('remote scanning: blockchain.silentpayments.subscribe / unsubscribe (Frigate’s methods)', () => {
  let dir: string;
  let store: TweakIndexStore;
  let events: EventEmitter<TweakIndexerEvents>;
  let servers: ElectrumServers;
  let port: number;
  let log: LogRecord[];
  const clients: ElectrumTestClient[] = [];
  const alice = newWallet();
  const bob = newWallet();
  const expectedAlice: Array<{ height: number; tx_hash: string }> = [];

  interface StartOptions {
    limits?: Partial<ElectrumLimits>;
    store?: TweakIndexStore;
    mempool?: MempoolIndex;
    progressIntervalMs?: number;
    scanWorkers?: number;
  }
  const start = async (opts: StartOptions = {}): Promise<void> => {
    await servers?.close();
    const memory = createMemoryLogger();
    log = memory.lines;
    servers = createElectrumServers({
      feed: { store: opts.store ?? store, events, ...(opts.mempool === undefined ? {} : { mempool: opts.mempool }) },
      settings: {
        network: 'regtest',
        serverName: 'silent-payments-electrs test',
        startHeight: 10,
        limits: { ...ELECTRUM_LIMIT_DEFAULTS, ...opts.limits },
        ...(opts.progressIntervalMs === undefined ? {} : { progressIntervalMs: opts.progressIntervalMs }),
      },
      logger: memory.logger,
      ...(opts.scanWorkers === undefined ? {} : { scanWorkers: opts.scanWorkers }),
    });
    await new Promise<void>((resolve) => servers.tcp.listen(0, '127.0.0.1', resolve));
    port = (servers.tcp.address() as AddressInfo).port;
  };
  const client = async (): Promise<ElectrumTestClient> => {
    const c = await connectElectrum(port);
    clients.push(c);
    return c;
  };
  const addBlock = async (record: BlockRecord): Promise<void> => {
    await store.applyBlock(record);
    events.emit('block', record.height, record.hash);
  };
  const rollback = async (height: number): Promise<void> => {
    await store.rollback(height);
    events.emit('rollback', height);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-remote-'));
    store = createSqliteIndexStore(join(dir, 'tweak-index.sqlite'));
    await store.open();
    events = new EventEmitter();
    // Heights 10…39: 150 payments to Alice (two outputs in some, a labelled one at 20), Bob paid at 15 and 30, filler rows.
    for (let h = 10; h < 40; h += 1) {
      const txs = [otherTx(txidOf(h, 0))];
      for (let i = 1; i <= 5; i += 1) {
        const txid = txidOf(h, i);
        txs.push(paying(alice, txid, { count: i === 2 ? 2 : 1, label: h === 20 && i === 1 ? 1 : undefined }));
        if (!(h === 20 && i === 1)) expectedAlice.push({ height: h, tx_hash: txid });
      }
      if (h === 15 || h === 30) txs.push(paying(bob, txidOf(h, 9)));
      await store.applyBlock(blockOf(h, txs));
    }
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

  it('answers the address, then sends the history in blockchain order, 100 entries at most a page, before progress 1.0', async () => {
    const c = await client();
    expect(await c.call(METHOD, [...alice.params, 10])).toEqual({ address: addressOf(alice), labels: [0], start_height: 10 });
    const { notes, history } = await historyOf(c);
    expect(notes.length).toBeGreaterThanOrEqual(2);
    for (const n of notes) expect(n.subscription).toEqual({ address: addressOf(alice), labels: [0], start_height: 10 });
    expect(history).toEqual(expectedAlice);
  });

  it('finds labelled payments with the fourth parameter, starts at a height or a timestamp', async () => {
    const c = await client();
    expect(await c.call(METHOD, [...alice.params, 20, [1]])).toEqual({ address: addressOf(alice), labels: [0, 1], start_height: 20 });
    const { history } = await historyOf(c);
    expect(history.filter((h) => h.height === 20).map((h) => h.tx_hash)).toEqual([1, 2, 3, 4, 5].map((i) => txidOf(20, i)));
    expect(history[0]!.height).toBe(20);

    const b = await client();
    // The first block at or after the time of height 30.
    expect(await b.call(METHOD, [...bob.params, 1_700_000_000 + 30 * 600 - 1])).toMatchObject({
      address: addressOf(bob),
      start_height: 30,
    });
    const bobs = await historyOf(b);
    expect(bobs.notes[0]!.subscription.start_height).toBe(30);
    expect(bobs.history).toEqual([{ height: 30, tx_hash: txidOf(30, 9) }]);
  });

  it('notifies a new block’s payment, rescans from the fork after a reorg, and stops after unsubscribe', async () => {
    const c = await client();
    await c.call(METHOD, [...bob.params, 10]);
    expect((await historyOf(c)).history).toEqual([
      { height: 15, tx_hash: txidOf(15, 9) },
      { height: 30, tx_hash: txidOf(30, 9) },
    ]);
    await addBlock(blockOf(40, [paying(bob, txidOf(40, 1)), otherTx(txidOf(40, 2))]));
    expect(await nextNote(c)).toEqual({
      subscription: { address: addressOf(bob), labels: [0], start_height: 10 },
      progress: 1,
      history: [{ height: 40, tx_hash: txidOf(40, 1) }],
    });
    // Block 40 is replaced by one paying Bob in another transaction.
    await rollback(40);
    await addBlock(blockOf(40, [otherTx(txidOf(40, 3)), paying(bob, txidOf(40, 4))], 0xee));
    expect((await nextNote(c)).history).toEqual([{ height: 40, tx_hash: txidOf(40, 4) }]);

    // Unsubscribed, Bob hears nothing more; Alice, subscribed on the same connection, does.
    expect(await c.call('blockchain.silentpayments.unsubscribe', bob.params)).toBe(addressOf(bob));
    await c.call(METHOD, [...alice.params, 41]);
    expect((await nextNote(c)).history).toEqual([]);
    await addBlock(blockOf(41, [paying(bob, txidOf(41, 1)), paying(alice, txidOf(41, 2))]));
    const note = await nextNote(c);
    expect(note.subscription.address).toBe(addressOf(alice));
    expect(note.history).toEqual([{ height: 41, tx_hash: txidOf(41, 2) }]);
    // Nothing more: a notification sent before the ping's answer would arrive before it.
    let heard = false;
    void nextNote(c).then(() => (heard = true));
    await c.call('server.ping');
    expect(heard).toBe(false);
    await rollback(40);
  });

  it('scans a closed "FROM-TO" range and nothing after it; a re-subscription never narrows the coverage', async () => {
    // One worker: jobs run in the order queued, so a scan of Bob's after his range would be notified before Alice's.
    await start({ scanWorkers: 1 });
    const c = await client();
    expect(await c.call(METHOD, [...bob.params, '10-20'])).toEqual({ address: addressOf(bob), labels: [0], start_height: 10 });
    expect((await historyOf(c)).history).toEqual([{ height: 15, tx_hash: txidOf(15, 9) }]);
    await c.call(METHOD, [...alice.params, 40]);
    expect((await historyOf(c)).history).toEqual([]);
    await addBlock(blockOf(40, [paying(bob, txidOf(40, 1)), paying(alice, txidOf(40, 2))]));
    const note = await nextNote(c);
    expect([note.subscription.address, note.history]).toEqual([addressOf(alice), [{ height: 40, tx_hash: txidOf(40, 2) }]]);
    // Again from 30, open: the wider start (10) is kept and answered, and everything is sent again.
    expect(await c.call(METHOD, [...bob.params, 30])).toEqual({ address: addressOf(bob), labels: [0], start_height: 10 });
    expect((await historyOf(c)).history).toEqual([
      { height: 15, tx_hash: txidOf(15, 9) },
      { height: 30, tx_hash: txidOf(30, 9) },
      { height: 40, tx_hash: txidOf(40, 1) },
    ]);
    await expect(c.call(METHOD, [...bob.params, '20-10'])).rejects.toMatchObject({ code: -32602 });
    await rollback(40);
    await start();
  });

  it('reads a new block’s rows once for all the live wallets, and again after a reorg', async () => {
    const reads: string[] = [];
    const counting: TweakIndexStore = Object.create(store, {
      txs: {
        value: async (from: number, to: number) => {
          reads.push(`${from}-${to}`);
          return store.txs(from, to);
        },
      },
    }) as TweakIndexStore;
    await start({ store: counting });
    const wallets = [newWallet(), newWallet(), newWallet()];
    const c = await client();
    for (const w of wallets) {
      await c.call(METHOD, [...w.params, 40]);
      await historyOf(c);
    }
    reads.length = 0;
    await addBlock(
      blockOf(
        40,
        wallets.map((w, i) => paying(w, txidOf(40, i))),
      ),
    );
    const notes = await Promise.all(wallets.map(() => nextNote(c)));
    expect(notes.map((n) => n.history[0]!.tx_hash).sort()).toEqual(wallets.map((_, i) => txidOf(40, i)).sort());
    expect(reads).toEqual(['40-40']);
    // A reorg: the replaced block's rows are read anew (what was kept of the old one is dropped).
    await rollback(40);
    await addBlock(
      blockOf(
        40,
        wallets.map((w, i) => paying(w, txidOf(40, 8 + i))),
        0xee,
      ),
    );
    const again = await Promise.all(wallets.map(() => nextNote(c)));
    expect(again.map((n) => n.history[0]!.tx_hash).sort()).toEqual(wallets.map((_, i) => txidOf(40, 8 + i)).sort());
    expect(reads).toEqual(['40-40', '40-40']);
    await rollback(40);
    await start();
  });

  it('answers bad keys, labels and starts with invalid-params errors that never echo the key', async () => {
    const c = await client();
    const [scan, spend] = alice.params;
    await expect(c.call(METHOD, [scan.slice(2), spend])).rejects.toMatchObject({
      code: -32602,
      message: 'scan_private_key must be 64 hex characters',
    });
    await expect(c.call(METHOD, ['0'.repeat(64), spend])).rejects.toMatchObject({
      code: -32602,
      message: 'scan_private_key is not a valid scalar',
    });
    await expect(c.call(METHOD, [scan, `04${spend.slice(2)}`])).rejects.toMatchObject({ code: -32602 });
    await expect(c.call(METHOD, [scan, spend, 'soon'])).rejects.toMatchObject({ code: -32602 });
    await expect(c.call(METHOD, [scan, spend, 10, [-1]])).rejects.toMatchObject({ code: -32602 });
    await expect(c.call(METHOD, [scan, spend, 10, Array.from({ length: 11 }, (_, i) => i + 1)])).rejects.toMatchObject({
      code: -32602,
      message: 'more than 10 labels',
    });
    expect(await c.call('server.ping')).toBeNull();
  });

  it('enforces the wallets per connection and the scans per connection and per address', async () => {
    // The scans wait on the store until released: they are running while the limits are tried.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const gated: TweakIndexStore = Object.create(store, {
      txs: { value: async (from: number, to: number) => held.then(() => store.txs(from, to)) },
    }) as TweakIndexStore;
    await start({ limits: { maxWallets: 2, maxScansPerConnection: 1, maxScansPerIp: 1 }, store: gated });
    const c = await client();
    await c.call(METHOD, [...alice.params, 10]);
    await expect(c.call(METHOD, [...bob.params, 10])).rejects.toMatchObject({
      code: -32000,
      message: 'more than 1 silent-payment scans running on this connection',
    });
    const other = await client();
    await expect(other.call(METHOD, [...bob.params, 10])).rejects.toMatchObject({
      code: -32000,
      message: 'more than 1 silent-payment scans running from this address',
    });
    release();
    await historyOf(c);
    await c.call(METHOD, [...bob.params, 10]);
    await historyOf(c);
    await expect(c.call(METHOD, [...newWallet().params, 10])).rejects.toMatchObject({
      code: -32602,
      message: 'more than 2 silent-payment subscriptions on this connection',
    });
    await start();
  });

  it('keeps the keys in memory only: neither the log nor any file under DATA_DIR holds them after the connection closes', async () => {
    const secret = newWallet();
    const c = await client();
    await c.call(METHOD, [...secret.params, 10, [1, 2]]);
    await historyOf(c);
    await addBlock(blockOf(40, [paying(secret, txidOf(40, 7))]));
    expect((await nextNote(c)).history).toEqual([{ height: 40, tx_hash: txidOf(40, 7) }]);
    await c.call('blockchain.silentpayments.unsubscribe', secret.params);
    c.writeRaw(`{"id":9,"method":"${METHOD}","params":["${secret.params[0]}"]}\n`);
    c.close();
    await c.ended;
    await rollback(40);
    await store.close();
    await store.open();
    const needles = [secret.params[0], Buffer.from(secret.scanPriv).toString('base64')];
    const logText = JSON.stringify(log);
    for (const n of needles) expect(logText).not.toContain(n);
    const files = (d: string): string[] =>
      readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));
    expect(files(dir).length).toBeGreaterThan(0);
    for (const file of files(dir)) {
      const content = readFileSync(file);
      expect(content.includes(Buffer.from(secret.scanPriv))).toBe(false);
      expect(content.includes(Buffer.from(secret.params[0]))).toBe(false);
    }
  });

  it('lets another wallet’s new-block notification through while a long restore runs', async () => {
    // A long history for Carol: 4000 rows more.
    const carol = newWallet();
    for (let h = 40; h < 44; h += 1)
      await addBlock(
        blockOf(
          h,
          Array.from({ length: 1000 }, (_, i) => otherTx(txidOf(h, i))),
        ),
      );
    const b = await client();
    await b.call(METHOD, [...bob.params, 43]);
    await historyOf(b);
    const c = await client();
    await c.call(METHOD, [...carol.params, 10]);
    const order: string[] = [];
    const carolDone = historyOf(c).then(() => order.push('carol 1.0'));
    await addBlock(blockOf(44, [paying(bob, txidOf(44, 1))]));
    expect((await nextNote(b)).history).toEqual([{ height: 44, tx_hash: txidOf(44, 1) }]);
    order.push('bob block');
    await carolDone;
    expect(order).toEqual(['bob block', 'carol 1.0']);
    await rollback(40);
  });

  it('follows a found output’s spend through the script-hash methods, and refuses any other script hash', async () => {
    const dave = newWallet();
    const c = await client();
    const payment = paying(dave, txidOf(40, 1));
    await addBlock(blockOf(40, [payment]));
    await c.call(METHOD, [...dave.params, 40]);
    expect((await historyOf(c)).history).toEqual([{ height: 40, tx_hash: txidOf(40, 1) }]);
    const hash = taprootHash(payment.outputs[0]!.xonly);
    expect(await c.call('blockchain.scripthash.listunspent', [hash])).toEqual([
      { tx_hash: txidOf(40, 1), tx_pos: 0, height: 40, value: 1000 },
    ]);
    expect(await c.call('blockchain.scripthash.get_balance', [hash])).toEqual({ confirmed: 1000, unconfirmed: 0 });
    const before = await c.call<string>('blockchain.scripthash.subscribe', [hash]);
    expect(before).toMatch(/^[0-9a-f]{64}$/);

    // Block 41 spends it: the subscriber is told, the history gains the spender, nothing is left unspent.
    const spending = blockOf(41, [otherTx(txidOf(41, 1))]);
    spending.spent = [{ txid: txidOf(40, 1), vout: 0, spender: txidOf(41, 1), outHeight: 40 }];
    await addBlock(spending);
    expect(await c.next('blockchain.scripthash.subscribe')).toBe(hash);
    expect(await c.call('blockchain.scripthash.get_history', [hash])).toEqual([
      { tx_hash: txidOf(40, 1), height: 40 },
      { tx_hash: txidOf(41, 1), height: 41 },
    ]);
    expect(await c.call('blockchain.scripthash.get_balance', [hash])).toEqual({ confirmed: 0, unconfirmed: 0 });
    expect(await c.call('blockchain.scripthash.listunspent', [hash])).toEqual([]);

    await expect(c.call('blockchain.scripthash.get_history', ['ab'.repeat(32)])).rejects.toMatchObject({ code: -32002 });
    await expect(c.call('blockchain.scripthash.get_history', ['xyz'])).rejects.toMatchObject({ code: -32602 });
    await expect(c.call('blockchain.transaction.get', [txidOf(40, 1)])).rejects.toMatchObject({
      code: -32003,
      message: 'this server has no node configured for wallet methods',
    });
    expect(await c.call('blockchain.block.headers', [39, 3])).toEqual({
      count: 3,
      hex: [39, 40, 41].map((h) => Buffer.alloc(80, h).toString('hex')).join(''),
      max: 2016,
    });
    await rollback(40);
  });

  it('drops what a running scan read from blocks a reorg orphaned, and scans the new branch instead', async () => {
    const erin = newWallet();
    await addBlock(blockOf(40, [paying(erin, txidOf(40, 0xa))]));
    // The scan reads block 40's rows, then waits until released: the reorg happens in between.
    let reading!: () => void;
    const read = new Promise<void>((resolve) => (reading = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const gated: TweakIndexStore = Object.create(store, {
      txs: {
        value: async (from: number, to: number) => {
          const rows = await store.txs(from, to);
          reading();
          await held;
          return rows;
        },
      },
    }) as TweakIndexStore;
    await start({ store: gated });
    const c = await client();
    await c.call(METHOD, [...erin.params, 40]);
    await read;
    await rollback(40);
    await addBlock(blockOf(40, [paying(erin, txidOf(40, 0xb))], 0xee));
    release();
    expect((await historyOf(c)).history).toEqual([{ height: 40, tx_hash: txidOf(40, 0xb) }]);
    await rollback(40);
    await start();
  });

  it('notifies the progress of a restore that finds nothing, a page at a time, before progress 1.0', async () => {
    await start({ progressIntervalMs: 0 });
    const c = await client();
    const nobody = newWallet();
    await c.call(METHOD, [...nobody.params, 10]);
    const { notes } = await historyOf(c);
    // Heights 10…39 in pages: each page's progress but the last's, then 1.0 (no note just before it).
    const pages = Math.ceil(30 / PAGE_HEIGHTS);
    expect(pages).toBeGreaterThan(1);
    expect(notes.map((n) => [n.progress, n.history.length])).toEqual([
      ...Array.from({ length: pages - 1 }, (_, i) => [((i + 1) * PAGE_HEIGHTS) / 30, 0]),
      [1, 0],
    ]);
    // Alice's history arrives whole and in order however it is cut.
    await c.call(METHOD, [...alice.params, 10]);
    expect((await historyOf(c)).history).toEqual(expectedAlice);
    await start();
  });

  it('sends each mempool payment once, scanning only what each mempool event adds; its confirmation comes by script hash', async () => {
    const frank = newWallet();
    const pool = testMempool(events);
    const early = paying(frank, txidOf(0, 1));
    pool.hold(early);
    await start({ mempool: pool.mempool });
    const c = await client();
    await c.call(METHOD, [...frank.params, 10]);
    expect((await historyOf(c)).history).toEqual([]);
    expect(await nextNote(c)).toMatchObject({ progress: 1, history: [{ height: 0, tx_hash: early.txid }] });

    const late = paying(frank, txidOf(0, 2));
    pool.enter(late, otherTx(txidOf(0, 3)));
    expect((await nextNote(c)).history).toEqual([{ height: 0, tx_hash: late.txid }]);
    // Told again of a transaction already sent, and of one paying nobody: nothing is sent.
    pool.enter(late, otherTx(txidOf(0, 4)));
    expect(await notifiedBeforePing(c, METHOD)).toBe(false);
    // The whole mempool was read once, for the first scan; the events gave their own rows.
    expect(pool.counts.wholeReads).toBe(1);

    // The wallet follows the output by script hash (Frigate's README): its confirmation comes there.
    const hash = taprootHash(late.outputs[0]!.xonly);
    expect(await c.call<string>('blockchain.scripthash.subscribe', [hash])).toBe(statusOf([late.txid, 0]));
    // In the mempool its value is unconfirmed, as Electrum's get_balance says it.
    expect(await c.call('blockchain.scripthash.get_balance', [hash])).toEqual({ confirmed: 0, unconfirmed: 1000 });
    pool.mined(late);
    await addBlock(blockOf(40, [late]));
    expect(await c.nextParams('blockchain.scripthash.subscribe')).toEqual([hash, statusOf([late.txid, 40])]);
    // Mined, it is not sent again on the silent-payment subscription.
    expect(await notifiedBeforePing(c, METHOD)).toBe(false);
    expect(await c.call('blockchain.scripthash.listunspent', [hash])).toEqual([{ tx_hash: late.txid, tx_pos: 0, height: 40, value: 1000 }]);
    expect(await c.call('blockchain.scripthash.get_balance', [hash])).toEqual({ confirmed: 1000, unconfirmed: 0 });
    await rollback(40);
    await start();
  });

  it('forgets a mempool payment that left the mempool unmined, never sends it twice, and empties the statuses on unsubscribe', async () => {
    const gina = newWallet();
    const pool = testMempool(events);
    await start({ mempool: pool.mempool });
    const c = await client();
    await c.call(METHOD, [...gina.params, 10]);
    expect((await historyOf(c)).history).toEqual([]);
    const payment = paying(gina, txidOf(0, 7));
    pool.enter(payment);
    expect((await nextNote(c)).history).toEqual([{ height: 0, tx_hash: payment.txid }]);
    const hash = taprootHash(payment.outputs[0]!.xonly);
    expect(await c.call<string>('blockchain.scripthash.subscribe', [hash])).toBe(statusOf([payment.txid, 0]));

    // Replaced or evicted: its script hash goes empty and is served no more.
    pool.leave(payment);
    expect(await c.nextParams('blockchain.scripthash.subscribe')).toEqual([hash, null]);
    await expect(c.call('blockchain.scripthash.get_history', [hash])).rejects.toMatchObject({ code: -32002 });

    // Broadcast again, then mined: served again by script hash, never notified a second time.
    pool.enter(payment);
    expect(await c.nextParams('blockchain.scripthash.subscribe')).toEqual([hash, statusOf([payment.txid, 0])]);
    pool.mined(payment);
    await addBlock(blockOf(40, [payment]));
    expect(await c.nextParams('blockchain.scripthash.subscribe')).toEqual([hash, statusOf([payment.txid, 40])]);
    expect(await notifiedBeforePing(c, METHOD)).toBe(false);

    // Unsubscribed: the outputs it found are no longer this connection's.
    await c.call('blockchain.silentpayments.unsubscribe', gina.params);
    expect(await c.nextParams('blockchain.scripthash.subscribe')).toEqual([hash, null]);
    await rollback(40);
    await start();
  });
});
