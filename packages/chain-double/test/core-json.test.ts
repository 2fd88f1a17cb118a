import {
  ADDRESS_PARAMS,
  bitsToTarget,
  decodeTx,
  formatDouble,
  headerHash,
  loadBitcoindContext,
  loadBitcoindFixture,
  merkleRoot,
  txToJson,
  writeJson,
  type Coin,
} from '../src';
import { buildCoinbase, serializeHeader, type BlockHeader } from '../src/block';
import { hexToBytes } from '../src/encoding';

// These tests rebuild Core's JSON from the recorded raw bytes and compare it byte for byte
// with what Bitcoin Core 29.2 wrote: asm, desc checksums, addresses, amounts, sizes.

const context = loadBitcoindContext();
const block0 = loadBitcoindFixture('getblock.verbosity0');
const block3 = loadBitcoindFixture('getblock.verbosity3');
type TxJson = {
  txid: string;
  hex: string;
  vin: { prevout?: { generated: boolean; height: number; value: number; scriptPubKey: { hex: string } } }[];
};
const recorded = (block3.body as { result: { tx: TxJson[]; merkleroot: string; size: number; strippedsize: number; weight: number } })
  .result;

function parseHeader(hex: string): BlockHeader {
  const b = hexToBytes(hex.slice(0, 160));
  const v = new DataView(b.buffer);
  const rev = (from: number) =>
    Buffer.from(b.subarray(from, from + 32))
      .reverse()
      .toString('hex');
  return {
    version: v.getUint32(0, true),
    prev: rev(4),
    merkleRoot: rev(36),
    time: v.getUint32(68, true),
    bits: v.getUint32(72, true),
    nonce: v.getUint32(76, true),
  };
}

function undoOf(tx: TxJson): Coin[] {
  return tx.vin.map((vin) => {
    const p = vin.prevout!;
    // Amounts in the recording are exact to the satoshi.
    return { value: BigInt(Math.round(p.value * 1e8)), script: hexToBytes(p.scriptPubKey.hex), height: p.height, coinbase: p.generated };
  });
}

describe('Core JSON rebuilt from recorded bytes', () => {
  it('hashes the recorded header to block 112 and recomputes its merkle root', () => {
    const header = parseHeader((block0.body as { result: string }).result);
    expect(headerHash(header)).toBe(context.block_112_hash);
    expect(merkleRoot(recorded.tx.map((t) => t.txid))).toBe(recorded.merkleroot);
    expect(Buffer.from(serializeHeader(header)).toString('hex')).toBe((block0.body as { result: string }).result.slice(0, 160));
  });

  it('writes every transaction of block 112 at verbosity 3 exactly as Core does', () => {
    for (const [i, tx] of recorded.tx.entries()) {
      const decoded = decodeTx(tx.hex);
      const json = txToJson(decoded, { params: ADDRESS_PARAMS.regtest, undo: i === 0 ? undefined : undoOf(tx), fee: true, prevout: true });
      expect(block3.body_raw).toContain(writeJson(json));
    }
  });

  it('rebuilds the recorded coinbase byte for byte (BIP-34 height, witness commitment)', () => {
    const [coinbase, ...rest] = recorded.tx.map((t) => decodeTx(t.hex));
    const out = coinbase!.outputs[0]!;
    const rebuilt = buildCoinbase(
      112,
      out.script,
      out.value,
      rest.map((t) => t.hash),
    );
    expect(rebuilt.hex).toBe(coinbase!.hex);
  });

  it('computes sizes and weights like the recorded block', () => {
    const txs = recorded.tx.map((t) => decodeTx(t.hex));
    const size = (block0.body as { result: string }).result.length / 2;
    expect(size).toBe(recorded.size);
    expect(80 + 1 + txs.reduce((s, t) => s + t.strippedSize, 0)).toBe(recorded.strippedsize);
    expect(recorded.strippedsize * 3 + size).toBe(recorded.weight);
  });

  it.each(['getrawtransaction.verbose-true', 'getrawtransaction.mempool.verbose-true', 'getrawtransaction.segwit-v0.verbose-true'])(
    'writes the transaction of %s exactly as Core does',
    (name) => {
      const f = loadBitcoindFixture(name);
      const result = (f.body as { result: { hex: string } }).result;
      const json = txToJson(decodeTx(result.hex), { params: ADDRESS_PARAMS.regtest });
      expect(f.body_raw).toContain(writeJson(json).slice(0, -1));
    },
  );

  it('formats doubles like UniValue (16 significant digits, two-digit exponents)', () => {
    for (const name of ['signet.getblockchaininfo', 'getblockchaininfo']) {
      const f = loadBitcoindFixture(name);
      const r = (f.body as { result: { difficulty: number; verificationprogress: number; bits: string; target: string } }).result;
      expect(f.body_raw).toContain(`"difficulty":${formatDouble(r.difficulty)},`);
      expect(f.body_raw).toContain(`"verificationprogress":${formatDouble(r.verificationprogress)},`);
      expect(bitsToTarget(parseInt(r.bits, 16)).toString(16).padStart(64, '0')).toBe(r.target);
    }
  });
});
