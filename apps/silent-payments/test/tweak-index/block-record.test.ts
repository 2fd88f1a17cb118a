import { createHash } from 'node:crypto';
import { spentOutpointHash, spentOutpointHashes } from '../../src/tweak-index/block-record';

// BlindBit's short hash of a spent outpoint, as
// docs/silent-payments.md, "The tweak index (light wallets)" gives it: the first 8 bytes of
// SHA-256(txid in internal order ‖ vout u32 LE ‖ the spending block's hash in internal order),
// written out here byte by byte.
describe('the spent outpoints’ short hashes', () => {
  const txid = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
  const blockHash = '0000000000000000000123456789abcdef0123456789abcdef0123456789abcd';
  const expected = (tx: string, vout: number): string => {
    const message = Buffer.concat([
      Buffer.from(tx, 'hex').reverse(),
      Buffer.from([vout & 0xff, (vout >>> 8) & 0xff, (vout >>> 16) & 0xff, vout >>> 24]),
      Buffer.from(blockHash, 'hex').reverse(),
    ]);
    return createHash('sha256').update(message).digest().subarray(0, 8).toString('hex');
  };

  it('hashes the txid and block hash in internal order and the vout little-endian', () => {
    expect(Buffer.from(spentOutpointHash(txid, 0x01020304, blockHash)).toString('hex')).toBe(expected(txid, 0x01020304));
  });

  it('gives each outpoint of a block its own hash', () => {
    const other = 'ff'.repeat(32);
    const hashes = spentOutpointHashes(
      [
        { txid, vout: 0 },
        { txid: other, vout: 7 },
        { txid, vout: 1 },
      ],
      blockHash,
    );
    expect(hashes.map((h) => Buffer.from(h).toString('hex'))).toEqual([expected(txid, 0), expected(other, 7), expected(txid, 1)]);
    expect(spentOutpointHashes([], blockHash)).toEqual([]);
  });
});
