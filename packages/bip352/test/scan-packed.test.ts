import {
  createReceiver,
  createSilentPaymentOutputs,
  encodeSilentPaymentAddress,
  labeledSpendPub,
  loadSecp256k1Backend,
  NUMS_H_HEX,
  packBlockAnswer,
  packTransactions,
  PackedWriter,
  readPackedOutputs,
  readPackedTransactions,
  type PackedTransaction,
  scanInputsFromRpc,
  computeTweakData,
  type ScanInput,
} from '../src';
import { taggedHash } from '../src/hash';
import { ser32 } from '../src/bytes';
import { loadCoreBlockAnswer } from './support/helpers';
import { cat, hex, key, p2tr, pub, spend, xonly, type Kind } from './support/spends';

/**
 * Receiver.scanPacked (native/README.md, "Scanning packed transactions"): with the native backend the
 * packed inputs are read in C (native/packed-inputs.h: eligibility, keys, smallest outpoint,
 * HASH160 of P2PKH keys), with the others in JavaScript and given to scanTransactions. Both must
 * give what scanTransactions gives for the same transactions as objects, whatever the inputs.
 */
const native = loadSecp256k1Backend('native');
const noble = loadSecp256k1Backend('noble');

const scanPriv = key();
const spendPub = pub(key());
const LABELS = [1, 7];
const address = encodeSilentPaymentAddress(pub(scanPriv), spendPub, 'signet');
const labeled = (m: number): string => encodeSilentPaymentAddress(pub(scanPriv), labeledSpendPub(scanPriv, spendPub, m), 'signet');
const NUMS = Buffer.from(NUMS_H_HEX, 'hex');
const P2WSH = (): Uint8Array => cat([0x00, 0x20], key());

/** Inputs of every kind the rules tell apart, eligible or not (src/inputs.ts). */
function inputOf(variant: number): ScanInput {
  const kinds: Kind[] = ['p2tr', 'p2tr-script', 'p2wpkh', 'p2sh-p2wpkh', 'p2pkh', 'p2pkh-malleated'];
  if (variant < kinds.length) return spend(kinds[variant]!);
  const base = spend('p2tr');
  const vout = variant; // outpoints differ in vout too: the smallest outpoint reads it
  switch (variant) {
    case 6: // script path with the NUMS internal key
      return { ...base, vout, witness: [new Uint8Array(64), Uint8Array.of(0x51), cat([0xc0], NUMS)] };
    case 7: // the same behind an annex
      return { ...base, vout, witness: [new Uint8Array(64), Uint8Array.of(0x51), cat([0xc1], NUMS), Uint8Array.of(0x50, 1)] };
    case 8: // key path with an annex (two items: no control block)
      return { ...base, vout, witness: [new Uint8Array(64), Uint8Array.of(0x50)] };
    case 9: // script path, a control block of another internal key behind an annex
      return { ...base, vout, witness: [Uint8Array.of(0x51), cat([0xc0], xonly(key())), Uint8Array.of(0x50, 9, 9)] };
    case 10: // P2TR with no witness
      return { ...base, vout, witness: [] };
    case 11: // P2WPKH with an uncompressed key
      return { ...spend('p2wpkh'), vout, witness: [new Uint8Array(71), cat([0x04], key(), key())] };
    case 12: // P2SH whose scriptSig is not a P2WPKH redeem script
      return { ...spend('p2sh-p2wpkh'), vout, scriptSig: cat([0x16, 0x00, 0x20], new Uint8Array(20)) };
    case 13: {
      // P2PKH whose scriptSig holds a key of another hash
      const other = spend('p2pkh');
      return { ...other, vout, prevoutScript: spend('p2pkh').prevoutScript };
    }
    case 14: // SegWit v2: the whole transaction is not scanned
      return { ...base, vout, prevoutScript: cat([0x52, 0x20], key()) };
    case 15: // P2WSH: not on the list
      return { ...base, vout, prevoutScript: P2WSH() };
    default: // a key that is not on the curve (x = 0)
      return { ...base, vout, prevoutScript: p2tr(new Uint8Array(32)) };
  }
}

const VARIANTS = 17;

/** Transactions mixing those inputs, paying the receiver (labels included) or not. */
function transactions(count: number, seed: number): PackedTransaction[] {
  const txs: PackedTransaction[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + ((i + seed) % 3);
    const inputs = Array.from({ length: n }, (_, j) => inputOf((i * 7 + j * 3 + seed) % VARIANTS));
    const recipients = [address, labeled(LABELS[i % 2]!), labeled(5), address].slice(0, 1 + (i % 4));
    let paid: Uint8Array[] = [];
    try {
      // the sender skips the inputs it cannot use, as the receiver does; none left: it throws
      if (i % 5 !== 4) paid = [...createSilentPaymentOutputs(inputs as ReturnType<typeof spend>[], recipients).values()].flat();
    } catch {
      paid = [];
    }
    const scripts = [...paid.map(p2tr), p2tr(xonly(key())), P2WSH()];
    if (i % 11 === 10) scripts.splice(0, scripts.length, P2WSH()); // no taproot output at all
    const outputs = scripts.map((script, index) => ({ index: index * 2 + (i % 2), script })).reverse();
    txs.push({ txid: hex(key()), inputs, outputs, values: outputs.map((o) => o.index / 1000) });
  }
  return txs;
}

/** What scanTransactions answers for the transactions, in scanPacked's shape. */
function reference(receiver: ReturnType<typeof createReceiver>, txs: PackedTransaction[]) {
  const hits: Array<{ txid: string; found: unknown[]; values: number[] }> = [];
  const refused: Array<{ txid: string; error: Error }> = [];
  receiver.scanTransactions(txs).forEach((found, i) => {
    const { txid, outputs, values } = txs[i]!;
    if (found instanceof Error) refused.push({ txid, error: found });
    else if (found.length > 0) hits.push({ txid, found, values: found.map((f) => values[outputs.findIndex((o) => o.index === f.index)]!) });
  });
  return { hits, refused };
}

describe('Receiver.scanPacked', () => {
  const receivers = {
    native: createReceiver({ scanPriv, spendPub, labels: LABELS, backend: native }),
    noble: createReceiver({ scanPriv, spendPub, labels: LABELS, backend: noble }),
  };

  it.each([1, 2, 3])('finds what scanTransactions finds, inputs of every kind, on both backends (seed %i)', (seed) => {
    const txs = transactions(90, seed);
    const jobs = packTransactions(txs);
    expect(readPackedTransactions(jobs)).toEqual(
      txs.map((tx) => ({
        ...tx,
        inputs: tx.inputs.map(({ txid, vout, scriptSig, witness, prevoutScript }) => ({ txid, vout, scriptSig, witness, prevoutScript })),
      })),
    );
    // the outputs alone, the inputs skipped: the same txids, outputs and values, transaction after transaction
    const outputs = [];
    for (let at = 0; at < jobs.length;) {
      const { next, ...tx } = readPackedOutputs(jobs, at);
      outputs.push(tx);
      at = next;
    }
    expect(outputs).toEqual(txs.map(({ txid, outputs: o, values }) => ({ txid, outputs: o, values })));
    const want = reference(receivers.native, txs);
    expect(want.hits.length).toBeGreaterThan(10);
    expect(want.hits.some((h) => h.found.length > 1)).toBe(true);
    expect(receivers.native.scanPacked(jobs)).toEqual(want);
    expect(receivers.noble.scanPacked(jobs)).toEqual(want);
    expect(reference(receivers.noble, txs)).toEqual(want);
  });

  it('gives each output found its value, and labels as scanTransactions does', () => {
    const inputs = [spend('p2pkh'), spend('p2tr')];
    const paid = [...createSilentPaymentOutputs(inputs, [labeled(7), address]).values()].flat();
    const outputs = [
      { index: 3, script: p2tr(paid[0]!) },
      { index: 0, script: P2WSH() },
      { index: 1, script: p2tr(paid[1]!) },
    ];
    const jobs = packTransactions([{ txid: 'ab'.repeat(32), inputs, outputs, values: [0.5, 1, 0.25] }]);
    for (const receiver of Object.values(receivers)) {
      const { hits, refused } = receiver.scanPacked(jobs);
      expect(refused).toEqual([]);
      expect(hits).toHaveLength(1);
      expect(hits[0]!.txid).toBe('ab'.repeat(32));
      const byIndex = new Map(hits[0]!.found.map((f, i) => [f.index, { label: f.label, value: hits[0]!.values[i] }]));
      expect(byIndex).toEqual(
        new Map([
          [3, { label: 7, value: 0.5 }],
          [1, { label: null, value: 0.25 }],
        ]),
      );
    }
  });

  it('finds nothing in transactions that are not eligible, and says nothing of them', () => {
    const inputs = [spend('p2wpkh')];
    const paid = [...createSilentPaymentOutputs(inputs, [address]).values()].flat();
    const outputs = [{ index: 0, script: p2tr(paid[0]!) }];
    const jobs = packTransactions([
      { txid: hex(key()), inputs, outputs, values: [1] },
      { txid: hex(key()), inputs: [...inputs, inputOf(14)], outputs, values: [1] }, // spends SegWit v2
      { txid: hex(key()), inputs: [inputOf(6)], outputs, values: [1] }, // NUMS only
      { txid: hex(key()), inputs: [], outputs, values: [1] },
    ]);
    for (const receiver of Object.values(receivers)) expect(receiver.scanPacked(jobs).hits.map((h) => h.found.length)).toEqual([1]);
  });

  it('reads the inputs of a real Bitcoin Core 29.2 block (taproot, P2WPKH, P2SH-P2WPKH, P2PKH) as scanTransactions does', () => {
    // each transaction given an output paying the receiver, made from its inputs' public keys
    // alone (t_0 from the tweak data: what the receiver computes), so it is found only where
    // the inputs are read right
    const { body, id } = loadCoreBlockAnswer();
    const envelope = JSON.parse(body);
    let paying = 0;
    for (const tx of envelope.result.tx) {
      if ('coinbase' in tx.vin[0]) continue;
      const tweak = computeTweakData(scanInputsFromRpc(tx.vin), noble);
      if (tweak === null) continue;
      const ecdh = noble.toCompressed(noble.mul(noble.pointFromCompressed(Buffer.from(tweak.tweak, 'hex')), scanPriv));
      const t0 = taggedHash('BIP0352/SharedSecret', ecdh, ser32(0));
      const x = noble.toXOnly(noble.addTweak(noble.pointFromCompressed(spendPub), t0));
      tx.vout.push({ value: 0.001, n: tx.vout.length, scriptPubKey: { hex: '5120' + hex(x) } });
      paying++;
    }
    const packed = packBlockAnswer(Buffer.from(JSON.stringify(envelope)), id)!;
    const txs = readPackedTransactions(packed.jobs);
    const kinds = new Set(txs.flatMap((tx) => tx.inputs.map((input) => input.prevoutScript[0])));
    expect([...kinds].sort((a, b) => a! - b!)).toEqual([0x00, 0x51, 0x76, 0xa9]); // P2WPKH, P2TR, P2PKH, P2SH
    expect(paying).toBe(3);
    for (const receiver of Object.values(receivers)) {
      const scanned = receiver.scanPacked(packed.jobs);
      expect(scanned.hits).toHaveLength(paying);
      expect(scanned).toEqual(reference(receiver, txs));
    }
    expect(receivers.native.scanPacked(new Uint8Array(0))).toEqual({ hits: [], refused: [] });
  });

  it('refuses bytes that are not whole packed transactions with a TypeError, cut anywhere, on both backends', () => {
    const jobs = packTransactions(transactions(3, 1));
    const boundaries = new Set<number>([0]);
    for (let at = 0; at < jobs.length;) {
      const next = at + packTransactions([readPackedTransactions(jobs.subarray(at))[0]!]).length;
      boundaries.add(next);
      at = next;
    }
    for (let cut = 0; cut <= jobs.length; cut++) {
      // the last transaction cut: readPackedOutputs refuses it too
      const last = Math.max(...[...boundaries].filter((b) => b < cut));
      if (!boundaries.has(cut)) expect(() => readPackedOutputs(jobs.slice(0, cut), last)).toThrow('jobs: not whole packed transactions');
      for (const receiver of Object.values(receivers)) {
        const part = jobs.slice(0, cut);
        if (boundaries.has(cut)) expect(() => receiver.scanPacked(part)).not.toThrow();
        else
          expect(() => receiver.scanPacked(part)).toThrow(
            expect.objectContaining({ name: 'TypeError', message: 'jobs: not whole packed transactions' }),
          );
      }
    }
    // counts that the bytes cannot hold
    const huge = jobs.slice(0, 40);
    new DataView(huge.buffer).setUint32(32, 0xffffffff, true);
    for (const receiver of Object.values(receivers))
      expect(() => receiver.scanPacked(huge)).toThrow(expect.objectContaining({ name: 'TypeError' }));
    expect(() => receivers.native.scanPacked('nope' as unknown as Uint8Array)).toThrow(expect.objectContaining({ name: 'TypeError' }));
  });
});

describe('PackedWriter', () => {
  /** Writes `tx` from hex, as the service's reader of JSON block answers does. */
  function writeFromHex(w: PackedWriter, tx: PackedTransaction): boolean {
    const h = (b: Uint8Array) => Buffer.from(b).toString('hex');
    if (!w.hexFixed(tx.txid, 32)) return false;
    w.u32(tx.inputs.length);
    w.u32(tx.outputs.length);
    for (const input of tx.inputs) {
      if (!w.hexFixed(input.txid, 32)) return false;
      w.u32(input.vout);
      if (!w.hexString(h(input.scriptSig))) return false;
      w.u32(input.witness.length);
      for (const item of input.witness) if (!w.hexString(h(item))) return false;
      if (!w.hexString(h(input.prevoutScript))) return false;
    }
    tx.outputs.forEach((o, i) => {
      w.u32(o.index);
      w.f64(tx.values[i]!);
      w.hexFixed(h(o.script), 34);
    });
    return true;
  }

  it('writes from hex what packTransactions writes from bytes, growing past its first buffer, and starts again empty once taken', () => {
    const txs = transactions(40, 3);
    const w = new PackedWriter(64);
    for (const tx of txs) expect(writeFromHex(w, tx)).toBe(true);
    const taken = w.take();
    expect(Buffer.from(taken)).toEqual(Buffer.from(packTransactions(txs)));
    expect(taken.byteOffset).toBe(0);
    expect(taken.buffer.byteLength).toBe(taken.length); // a buffer of its own: transferable
    expect(w.length).toBe(0);
    expect(readPackedTransactions(taken).map((tx) => tx.txid)).toEqual(txs.map((tx) => tx.txid));
  });

  it('behind packTransactions: a txid that is not 64 hex characters, or an output script not of 34 bytes, is a TypeError', () => {
    const [tx] = transactions(1, 0);
    const good = tx!;
    for (const txid of ['ab'.repeat(31), 'ab'.repeat(33), 'zz'.repeat(32), 'ab'.repeat(31) + 'a ', 7 as unknown as string])
      expect(() => packTransactions([{ ...good, txid }])).toThrow(new TypeError('txid expected 64 hex characters'));
    const inputs = [{ ...good.inputs[0]!, txid: 'g'.repeat(64) }, ...good.inputs.slice(1)];
    expect(() => packTransactions([{ ...good, inputs }])).toThrow(new TypeError('input txid expected 64 hex characters'));
    const outputs = [{ index: 0, script: new Uint8Array(33) }];
    expect(() => packTransactions([{ ...good, outputs, values: [1] }])).toThrow(new TypeError('outputs: packed scripts are 34 bytes'));
    expect(() => packTransactions([{ ...good, txid: good.txid.toUpperCase() }])).not.toThrow();
  });

  it('says false for hex of the wrong size or that is not hex, and a rewind drops the transaction begun', () => {
    const [first, second] = transactions(2, 0);
    const w = new PackedWriter();
    expect(writeFromHex(w, first!)).toBe(true);
    const start = w.length;
    expect(w.hexFixed('ab'.repeat(31), 32)).toBe(false);
    expect(w.hexFixed('zz'.repeat(32), 32)).toBe(false);
    expect(w.hexFixed(undefined, 32)).toBe(false);
    expect(w.hexString('abc')).toBe(false);
    expect(w.hexString('00zz')).toBe(false);
    expect(w.hexString(42)).toBe(false);
    expect(w.hexString('')).toBe(true);
    w.rewind(start);
    expect(writeFromHex(w, second!)).toBe(true);
    expect(Buffer.from(w.take())).toEqual(Buffer.from(packTransactions([first!, second!])));
  });
});
