import { randomBytes } from 'node:crypto';
import { serializeOutpoint, smallestOutpoint, type ScanInput } from '../src';

/** Reference: txid bytes reversed, then vout as 4 little-endian bytes. */
function reference(txid: string, vout: number): string {
  const le = Buffer.alloc(4);
  le.writeUInt32LE(vout);
  return Buffer.concat([Buffer.from(txid, 'hex').reverse(), le]).toString('hex');
}

const input = (txid: string, vout: number): ScanInput => ({
  txid,
  vout,
  scriptSig: new Uint8Array(0),
  witness: [],
  prevoutScript: new Uint8Array(0),
});

describe('serializeOutpoint', () => {
  it('writes the txid little-endian and vout little-endian, from lower- or upper-case hex', () => {
    for (let i = 0; i < 20; i++) {
      const txid = randomBytes(32).toString('hex');
      const vout = i === 0 ? 0xffffffff : randomBytes(4).readUInt32LE() >>> (i % 32);
      expect(Buffer.from(serializeOutpoint(txid, vout)).toString('hex')).toBe(reference(txid, vout));
      expect(serializeOutpoint(txid.toUpperCase(), vout)).toEqual(serializeOutpoint(txid, vout));
    }
  });

  it('rejects a txid that is not 64 hex characters and a vout out of range', () => {
    expect(() => serializeOutpoint('00'.repeat(31), 0)).toThrow(TypeError);
    expect(() => serializeOutpoint('0g' + '00'.repeat(31), 0)).toThrow(/non-hex character at 1/);
    expect(() => serializeOutpoint('00'.repeat(32), -1)).toThrow(RangeError);
    expect(() => serializeOutpoint('00'.repeat(32), 2 ** 32)).toThrow(RangeError);
  });
});

describe('smallestOutpoint', () => {
  it('picks the lexicographically smallest serialised outpoint, vout breaking ties', () => {
    for (let i = 0; i < 20; i++) {
      const inputs = Array.from({ length: 1 + (i % 5) }, (_, j) => input(randomBytes(32).toString('hex'), j * 255));
      if (i % 2 === 0) inputs.push(input(inputs[0]!.txid, 1)); // same txid, another vout
      const expected = inputs.map((x) => reference(x.txid, x.vout)).sort()[0];
      expect(Buffer.from(smallestOutpoint(inputs)).toString('hex')).toBe(expected);
    }
  });
});
