import { createHash } from 'node:crypto';
import { historyOf, type FoundOutput } from '../../src/tweak-index/remote-scan/found-outputs';

const txid = (n: number): string => n.toString(16).padStart(64, '0');
const output = (n: number, height: number, spent?: { txid: string; height: number }): FoundOutput => ({
  txid: txid(n),
  vout: 0,
  height,
  value: 1000n,
  spent,
});

describe('the script-hash history of found outputs', () => {
  it('lists confirmed transactions by height, then the mempool’s, and hashes the status in that order', () => {
    const { history, status } = historyOf([output(3, 0), output(2, 50, { txid: txid(9), height: 51 }), output(1, 40)]);
    expect(history).toEqual([
      { tx_hash: txid(1), height: 40 },
      { tx_hash: txid(2), height: 50 },
      { tx_hash: txid(9), height: 51 },
      { tx_hash: txid(3), height: 0 },
    ]);
    const expected = createHash('sha256')
      .update(`${txid(1)}:40:${txid(2)}:50:${txid(9)}:51:${txid(3)}:0:`)
      .digest('hex');
    expect(status).toBe(expected);
  });

  it('has no status when nothing was found', () => {
    expect(historyOf([])).toEqual({ history: [], status: null });
  });
});
