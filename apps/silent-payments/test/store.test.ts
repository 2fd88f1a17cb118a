import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type NewPayment, type Store } from '../src/store';

function payment(txid: string, vout: number, amountSats = 1000n): NewPayment {
  return {
    txid,
    vout,
    address: `tsp1address${vout}`,
    labelM: vout === 0 ? null : vout,
    amountSats,
    outputKey: 'aa'.repeat(32),
    tweak: 'bb'.repeat(32),
  };
}

describe('openStore', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sp-store-'));
    store = openStore(join(dir, 'db.sqlite'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands out label indexes from 1 and returns the existing label', () => {
    const a = store.createLabel('order-1', 5n, (m) => `addr-${m}`);
    const b = store.createLabel('order-2', 6n, (m) => `addr-${m}`);
    expect([a.m, b.m]).toEqual([1, 2]);
    expect(store.createLabel('order-1', 9n, (m) => `other-${m}`)).toEqual(a);
    expect(store.findLabel('order-2')).toEqual(b);
    expect(store.labels().map((l) => l.label)).toEqual(['order-1', 'order-2']);
  });

  it('turns a pending payment into a confirmed one keeping its first sighting time', () => {
    const [pending] = store.addPending([payment('11'.repeat(32), 1)]);
    expect(pending?.status).toBe('pending');
    expect(store.addPending([payment('11'.repeat(32), 1)])).toEqual([]);
    store.initProgress(10, 'ab'.repeat(32));
    const [confirmed] = store.applyBlock({ height: 10, hash: 'cd'.repeat(32) }, [payment('11'.repeat(32), 1)]);
    expect(confirmed).toMatchObject({
      id: `${'11'.repeat(32)}:1`,
      status: 'confirmed',
      blockHeight: 10,
      createdAt: pending?.createdAt,
      amountSats: 1000n,
    });
    expect(store.pendingTxids()).toEqual([]);
  });

  it('rolls back the payments and hashes of blocks above a height', () => {
    store.initProgress(5, '00'.repeat(32));
    store.applyBlock({ height: 5, hash: '05'.repeat(32) }, [payment('aa'.repeat(32), 0)]);
    store.applyBlock({ height: 6, hash: '06'.repeat(32) }, [payment('bb'.repeat(32), 2), payment('bb'.repeat(32), 3)]);
    store.addPending([payment('cc'.repeat(32), 0)]);
    expect(store.rollbackAbove(5)).toBe(2);
    expect(store.progress()).toEqual({ startHeight: 5, scannedHeight: 5 });
    expect(store.blockHash(6)).toBeUndefined();
    expect(store.blockHash(4)).toBe('00'.repeat(32));
    expect(store.countPayments()).toBe(2);
  });

  it('lists pending payments first, then the newest block first, with limit and offset', () => {
    store.initProgress(1, undefined);
    store.applyBlock({ height: 1, hash: '01'.repeat(32) }, [payment('01'.repeat(32), 0)]);
    store.applyBlock({ height: 2, hash: '02'.repeat(32) }, [payment('02'.repeat(32), 0)]);
    store.addPending([payment('03'.repeat(32), 0)]);
    expect(store.listPayments(10, 0).map((p) => p.blockHeight)).toEqual([null, 2, 1]);
    expect(store.listPayments(1, 1).map((p) => p.blockHeight)).toEqual([2]);
    expect(store.removePending(['03'.repeat(32)])).toBe(1);
    expect(store.countPayments()).toBe(2);
  });

  it('keeps everything across a reopen', () => {
    store.initProgress(3, '02'.repeat(32));
    store.applyBlock({ height: 3, hash: '03'.repeat(32) }, [payment('03'.repeat(32), 4, 2_100_000_000_000_000n)]);
    store.close();
    store = openStore(join(dir, 'db.sqlite'));
    expect(store.progress()).toEqual({ startHeight: 3, scannedHeight: 3 });
    expect(store.getPayment(`${'03'.repeat(32)}:4`)?.amountSats).toBe(2_100_000_000_000_000n);
  });

  it('refuses a database made for other keys', () => {
    store.assertIdentity({ network: 'signet', scanPub: 'a', spendPub: 'b' });
    expect(() => store.assertIdentity({ network: 'signet', scanPub: 'a', spendPub: 'b' })).not.toThrow();
    expect(() => store.assertIdentity({ network: 'signet', scanPub: 'x', spendPub: 'b' })).toThrow('key set');
    expect(() => store.assertIdentity({ network: 'mainnet', scanPub: 'a', spendPub: 'b' })).toThrow('network');
  });
});
