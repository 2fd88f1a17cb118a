import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import {
  computeTweaks,
  computeTweaksOfPacked,
  loadSecp256k1Backend,
  NO_PREVOUT_HEIGHT,
  packBlockAnswer,
  packRpcBlock,
  PACKED_TWEAK_BYTES,
  readPackedTransactions,
  scanInputsFromRpc,
  TAPROOT_SPEND_BYTES,
  type PackedBlockAnswer,
  type RpcVin,
} from '../src';
import { loadCoreBlockAnswer } from './support/helpers';

const { body: coreBody, id: coreId } = loadCoreBlockAnswer();
const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text));

interface Tx {
  txid: string;
  inputs: Array<{ txid: string; vout: number; scriptSig: string; witness: string[]; prevoutScript: string }>;
  outputs: Array<{ n: number; value: number; script: string }>;
}

/**
 * What the answer holds, read the plain way: JSON.parse, then the spends of every transaction
 * and the scan inputs (scanInputsFromRpc) and taproot outputs of those with a taproot output.
 * Throws where that reading fails.
 */
function reference(
  text: string,
  id: string,
): Omit<PackedBlockAnswer, 'jobs' | 'offsets' | 'taprootSpends' | 'coinbaseKeys' | 'header' | 'refused'> & { txs: Tx[] } {
  const envelope = JSON.parse(text);
  if (envelope.id !== id || (envelope.error !== null && envelope.error !== undefined)) throw new Error('not the answer');
  const block = envelope.result;
  if (typeof block.hash !== 'string' || typeof block.height !== 'number' || !Array.isArray(block.tx)) throw new Error('not a block');
  const spends: string[] = [];
  const txs: Tx[] = [];
  for (const tx of block.tx as Array<{
    txid: string;
    vin: RpcVin[];
    vout: Array<{ n: number; value: number; scriptPubKey: { hex: string } }>;
  }>) {
    for (const v of tx.vin) if (typeof v.txid === 'string' && typeof v.vout === 'number') spends.push(`${v.txid}:${v.vout}`, tx.txid);
    const taproot = tx.vout.filter((o) => o.scriptPubKey.hex.length === 68 && o.scriptPubKey.hex.startsWith('5120'));
    if (taproot.length === 0 || tx.vin.length === 0 || typeof tx.vin[0]!.coinbase === 'string') continue;
    txs.push({
      txid: tx.txid,
      inputs: scanInputsFromRpc(tx.vin).map((input) => ({
        txid: input.txid,
        vout: input.vout,
        scriptSig: bytesToHex(input.scriptSig),
        witness: input.witness.map((item) => bytesToHex(item)),
        prevoutScript: bytesToHex(input.prevoutScript),
      })),
      outputs: taproot.map((o) => ({ n: o.n, value: o.value, script: bytesToHex(hexToBytes(o.scriptPubKey.hex)) })),
    });
  }
  const nTx = typeof block.nTx === 'number' ? block.nTx : block.tx.length;
  return { hash: block.hash, height: block.height, previousblockhash: block.previousblockhash, nTx, spends, txs };
}

/** The packed transactions read back (the format of PackedBlockAnswer.jobs), with where each starts. */
function unpack(jobs: Uint8Array): { txs: Tx[]; starts: number[] } {
  const buf = Buffer.from(jobs.buffer, jobs.byteOffset, jobs.byteLength);
  let p = 0;
  const u32 = () => ((p += 4), buf.readUInt32LE(p - 4));
  const hex = (n: number) => ((p += n), buf.toString('hex', p - n, p));
  const varHex = () => hex(u32());
  const txs: Tx[] = [];
  const starts: number[] = [];
  while (p < buf.length) {
    starts.push(p);
    const txid = hex(32);
    const nIn = u32();
    const nOut = u32();
    const inputs: Tx['inputs'] = [];
    for (let i = 0; i < nIn; i++) {
      const prev = hex(32);
      const vout = u32();
      const scriptSig = varHex();
      const witness: string[] = [];
      for (let j = u32(); j > 0; j--) witness.push(varHex());
      inputs.push({ txid: prev, vout, scriptSig, witness, prevoutScript: varHex() });
    }
    const outputs: Tx['outputs'] = [];
    for (let i = 0; i < nOut; i++) {
      const n = u32();
      const value = buf.readDoubleLE(p);
      p += 8;
      outputs.push({ n, value, script: hex(34) });
    }
    txs.push({ txid, inputs, outputs });
  }
  return { txs, starts };
}

/** The native reading, in the reference's shape (and its offsets checked against the packing). */
function read(text: string, id: string): ReturnType<typeof reference> | undefined {
  const packed = packBlockAnswer(bytes(text), id);
  if (packed === undefined) return undefined;
  const { txs, starts } = unpack(packed.jobs);
  expect(packed.offsets).toEqual(starts);
  // and every field as the JavaScript reading of the parsed answer gives it, byte for byte
  expect(packed).toEqual(packRpcBlock(JSON.parse(text).result));
  const { hash, height, previousblockhash, nTx, spends } = packed;
  return { hash, height, previousblockhash, nTx, spends, txs };
}

/** xorshift32: the same altered answers on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

describe('packBlockAnswer', () => {
  it('reads a real Bitcoin Core 29.2 answer as JSON.parse and scanInputsFromRpc do', () => {
    const packed = read(coreBody, coreId);
    const expected = reference(coreBody, coreId);
    expect(packed).toEqual(expected);
    // the block of the fixture: a coinbase and three spends, of taproot, P2WPKH, P2SH-P2WPKH and P2PKH outputs
    expect(expected.height).toBe(112);
    expect(expected.spends.length / 2).toBe(4);
    expect(expected.txs.map((tx) => tx.inputs.length)).toEqual([1]);
    // every transaction given a taproot output too, so the inputs of every kind are packed
    const { result } = JSON.parse(coreBody);
    for (const tx of result.tx) tx.vout.push({ value: 0.0001, n: tx.vout.length, scriptPubKey: { hex: `5120${'ab'.repeat(32)}` } });
    const text = JSON.stringify({ result, error: null, id: coreId });
    const all = reference(text, coreId);
    expect(read(text, coreId)).toEqual(all);
    const inputs = all.txs.flatMap((tx) => tx.inputs);
    expect(inputs).toHaveLength(4);
    expect(inputs.filter((input) => input.scriptSig !== '' && input.witness.length > 0)).toHaveLength(1); // P2SH-P2WPKH
    expect(inputs.filter((input) => input.scriptSig !== '' && input.witness.length === 0)).toHaveLength(1); // P2PKH
  });

  it('takes the envelope in any order, with or without "error" and "jsonrpc", and a block without previousblockhash or nTx', () => {
    const { result } = JSON.parse(coreBody);
    const { previousblockhash: _prev, nTx: _nTx, ...genesisLike } = result;
    for (const text of [
      JSON.stringify({ id: coreId, jsonrpc: '2.0', result }),
      JSON.stringify({ error: null, result, id: coreId }),
      JSON.stringify({ result: genesisLike, error: null, id: coreId }, null, 2),
    ]) {
      const packed = read(text, coreId);
      expect(packed).toEqual(reference(text, coreId));
    }
    expect(read(JSON.stringify({ result: genesisLike, id: coreId }), coreId)).toMatchObject({
      previousblockhash: undefined,
      nTx: result.tx.length,
    });
  });

  it('leaves to JSON.parse an error, an answer to another call, and every answer it does not expect', () => {
    const { result } = JSON.parse(coreBody);
    const tx0 = result.tx.find(
      (tx: { vin: RpcVin[]; vout: Array<{ scriptPubKey: { hex: string } }> }) =>
        tx.vin[0]!.coinbase === undefined && tx.vout.some((o) => o.scriptPubKey.hex.startsWith('5120')),
    );
    const refused = [
      JSON.stringify({ result: null, error: { code: -5, message: 'Block not found' }, id: coreId }),
      JSON.stringify({ result, error: null, id: 'another' }),
      JSON.stringify({ result, error: null, id: 7 }),
      coreBody.replace('"hash":', '"h\\u0061sh":'), // a key written with an escape
      coreBody.replace('"height":112,', '"height":112,"height":113,'), // a key twice: JSON.parse keeps the last
      coreBody.replace('"height":112', '"height":112.5'),
      coreBody.replace('"height":112', '"height":1.12e2'),
      coreBody.replace(result.hash, result.hash.toUpperCase()),
      coreBody.replace(`"txid":"${tx0.txid}"`, `"txid":"${tx0.txid.slice(2)}"`),
      JSON.stringify({ result: { ...result, tx: [{ ...tx0, vin: tx0.vin.map(({ prevout: _p, ...v }: RpcVin) => v) }] }, id: coreId }),
      `${coreBody}x`,
      `\ufeff${coreBody}`,
      '<html>',
      '',
    ];
    for (const text of refused) expect(read(text, coreId)).toBeUndefined();
    expect(() => packBlockAnswer('not bytes' as unknown as Uint8Array, coreId)).toThrow('packBlockAnswer(body: Uint8Array, rpcId: string)');
  });

  it('gives up on every cut of the answer', () => {
    const body = coreBody.trimEnd();
    for (let end = 0; end < body.length; end++) expect(packBlockAnswer(bytes(body.slice(0, end)), coreId)).toBeUndefined();
  });

  it('reads 5,000 altered answers as the plain reading does, or leaves them to it', () => {
    const next = random(0x5eed);
    const chars = '"\\,:{}[]09afAFg -.+eEx\n\u0001';
    let handled = 0;
    let refused = 0;
    for (let i = 0; i < 5_000; i++) {
      const at = Math.floor(next() * coreBody.length);
      const kind = Math.floor(next() * 3);
      const char = chars[Math.floor(next() * chars.length)]!;
      const text =
        kind === 0
          ? coreBody.slice(0, at) + char + coreBody.slice(at + 1)
          : kind === 1
            ? coreBody.slice(0, at) + coreBody.slice(at + 1)
            : coreBody.slice(0, at) + char + coreBody.slice(at);
      const packed = read(text, coreId);
      if (packed === undefined) {
        refused++;
        continue;
      }
      handled++;
      expect(packed).toEqual(reference(text, coreId));
    }
    // most single changes fall on text the scanner skips; many make the JSON invalid
    expect(handled).toBeGreaterThan(1_000);
    expect(refused).toBeGreaterThan(1_000);
  });

  it("gives a tweak index's part: the taproot spends with their outputs' heights, the coinbase's taproot keys, the header", () => {
    const { result } = JSON.parse(coreBody);
    const packed = packBlockAnswer(bytes(coreBody), coreId)!;
    const { version, merkleroot, time, bits, nonce } = result;
    expect(packed.header).toEqual({ version, merkleroot, time, bits, nonce });
    const taproot = result.tx.flatMap((tx: { txid: string; vin: RpcVin[] }) =>
      tx.vin
        .filter((v) => v.prevout?.scriptPubKey.hex.startsWith('5120') && v.prevout.scriptPubKey.hex.length === 68)
        .map(
          (v) =>
            v.txid +
            Buffer.from(Uint32Array.of(v.vout!).buffer).toString('hex') +
            Buffer.from(Uint32Array.of(v.prevout!.height as number).buffer).toString('hex') +
            tx.txid,
        ),
    );
    expect(taproot).toHaveLength(1); // the fixture's one taproot spend
    expect(packed.taprootSpends.length).toBe(TAPROOT_SPEND_BYTES);
    expect(Buffer.from(packed.taprootSpends).toString('hex')).toBe(taproot.join(''));
    expect(packed.coinbaseKeys).toHaveLength(0); // Core's coinbase pays P2WPKH here

    // a taproot coinbase output, a taproot prevout without its height, a block without its header fields
    const coinbaseKey = 'cd'.repeat(32);
    result.tx[0].vout.push({ value: 0.5, n: result.tx[0].vout.length, scriptPubKey: { hex: `5120${coinbaseKey}` } });
    const spend = result.tx.flatMap((tx: { vin: RpcVin[] }) => tx.vin).find((v: RpcVin) => v.prevout?.scriptPubKey.hex.startsWith('5120'));
    delete spend.prevout.height;
    const { version: _v, ...headless } = result;
    for (const block of [result, headless]) {
      const text = JSON.stringify({ result: block, error: null, id: coreId });
      const altered = packBlockAnswer(bytes(text), coreId)!;
      expect(altered).toEqual(packRpcBlock(JSON.parse(text).result));
      expect(Buffer.from(altered.coinbaseKeys).toString('hex')).toBe(coinbaseKey);
      expect(Buffer.from(altered.taprootSpends).readUInt32LE(36)).toBe(NO_PREVOUT_HEIGHT);
      expect(altered.header === undefined).toBe(block === headless);
    }
  });
});

describe('packRpcBlock', () => {
  it("puts a transaction it cannot read in refused with the reading's words, and refuses an answer without prevouts", () => {
    const { result } = JSON.parse(coreBody);
    const paying = result.tx.findIndex(
      (tx: { vin: RpcVin[]; vout: Array<{ scriptPubKey: { hex: string } }> }) =>
        tx.vin[0]!.coinbase === undefined && tx.vout.some((o) => o.scriptPubKey.hex.startsWith('5120')),
    );
    const bad = structuredClone(result);
    bad.tx[paying].vin[0].prevout.scriptPubKey.hex = 'not hex';
    const packed = packRpcBlock(bad);
    let words = '';
    try {
      scanInputsFromRpc(bad.tx[paying].vin);
    } catch (err) {
      words = (err as Error).message;
    }
    expect(words).not.toBe('');
    expect(packed.refused).toEqual([{ txid: bad.tx[paying].txid, error: words }]);
    expect(packed.jobs).toHaveLength(0);
    delete bad.tx[paying].vin[0].prevout;
    expect(() => packRpcBlock(bad)).toThrow('getblock verbosity 3');
  });
});

describe('computeTweaksOfPacked', () => {
  it('gives each packed transaction the tweak computeTweaks gives its inputs, in C and on the other backends', () => {
    const { result } = JSON.parse(coreBody);
    // every transaction given a taproot output, so all are packed (P2TR, P2WPKH, P2SH-P2WPKH and P2PKH inputs)
    for (const tx of result.tx) tx.vout.push({ value: 0.0001, n: tx.vout.length, scriptPubKey: { hex: `5120${'ab'.repeat(32)}` } });
    const { jobs, offsets } = packRpcBlock(result);
    const txs = readPackedTransactions(jobs);
    const expected = computeTweaks(
      txs.map((tx) => tx.inputs),
      loadSecp256k1Backend('noble'),
    );
    expect(expected.filter((t) => t !== null)).toHaveLength(txs.length);
    for (const name of ['native', 'noble'] as const) {
      const records = computeTweaksOfPacked(jobs, loadSecp256k1Backend(name));
      const byOffset = new Map<number, string>();
      for (let at = 0; at < records.length; at += PACKED_TWEAK_BYTES) {
        byOffset.set(
          Buffer.from(records.buffer, records.byteOffset + at, 4).readUInt32LE(0),
          bytesToHex(records.subarray(at + 4, at + 37)),
        );
      }
      expect(offsets.map((o) => byOffset.get(o))).toEqual(expected.map((t) => bytesToHex(t!)));
    }
    expect(() => computeTweaksOfPacked(jobs.subarray(0, jobs.length - 1))).toThrow('not whole packed transactions');
  });
});
