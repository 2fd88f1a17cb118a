import type { BlockRecord } from '../../../src/tweak-index/block-record';

/** `n` bytes of `fill`. */
export const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);
/** `n` bytes of `fill`, hex. */
export const hex = (n: number, fill: number): string => Buffer.from(bytes(n, fill)).toString('hex');

/** A block at `height` with two indexed transactions (2 and 1 taproot outputs) spending `spends` (each created at `outHeight`). */
export function record(height: number, spends: Array<{ txid: string; vout: number; outHeight: number }> = []): BlockRecord {
  return {
    height,
    hash: hex(32, height),
    header: bytes(80, height),
    time: 1_700_000_000 + height,
    txs: [
      {
        txid: hex(32, 100 + height),
        tweak: bytes(33, 2),
        outputs: [
          { vout: 0, value: 1_000n, xonly: bytes(32, 7) },
          { vout: 2, value: 2_100_000_000_000_000n, xonly: bytes(32, 8) },
        ],
      },
      { txid: hex(32, 200 + (height % 50)), tweak: bytes(33, 3), outputs: [{ vout: 1, value: 546n, xonly: bytes(32, 9) }] },
    ],
    spent: spends.map((s) => ({ ...s, spender: hex(32, 100 + height) })),
    newOutputsFilter: bytes(5, 1),
    spentFilter: bytes(1, 0),
  };
}
