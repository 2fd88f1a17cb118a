import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import * as btc from '@scure/btc-signer';
import { bytesToHex, hexToBytes } from '@repo/crypto';
import { runCli, USAGE, type CliIo } from '../src/cli';
import {
  addressScript,
  createSweepPsbt,
  decodePsbt,
  dustThreshold,
  keyFingerprint4,
  PSBT_IN_SP_SPEND_BIP32_DERIVATION,
  PSBT_IN_SP_TWEAK,
  PSBT_IN_WITNESS_UTXO,
  PsbtError,
  signSweepPsbt,
  sweepVsize,
  type SweepInput,
} from '../src/psbt';

const N = secp256k1.Point.CURVE().n;
const scalar = (d: bigint) => hexToBytes(d.toString(16).padStart(64, '0'));
const toBig = (b: Uint8Array) => BigInt(`0x${bytesToHex(b)}`);

/** A spend key and outputs locked to b_spend + t_k, as BIP-352 outputs are (tweaks drawn at random). */
function wallet(count: number, amounts: bigint[] = []) {
  const secret = secp256k1.utils.randomSecretKey();
  const spendPub = secp256k1.getPublicKey(secret, true);
  const inputs: SweepInput[] = Array.from({ length: count }, (_, i) => {
    const tweak = secp256k1.utils.randomSecretKey();
    const d = (toBig(secret) + toBig(tweak)) % N;
    return {
      txid: bytesToHex(secp256k1.utils.randomSecretKey()),
      vout: i,
      amountSats: amounts[i] ?? 100_000n,
      outputKey: bytesToHex(schnorr.getPublicKey(scalar(d))),
      tweak: bytesToHex(tweak),
    };
  });
  return { secret, spendPub, inputs };
}

const P2WPKH = addressScript('bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080', 'regtest');

describe('sweep PSBT (BIP-174 v0 with BIP-376 fields)', () => {
  it('sizes a taproot key-path sweep exactly: 57.5 vB per input', () => {
    // 1 input, 1 P2WPKH output: 82 non-witness bytes, 68 witness bytes: 396 WU, 99 vB.
    expect(sweepVsize(1, P2WPKH)).toBe(99);
    expect(4 * sweepVsize(3, P2WPKH) - 4 * sweepVsize(1, P2WPKH)).toBe(2 * 230);
    expect(dustThreshold(P2WPKH)).toBe(294n);
    expect(dustThreshold(hexToBytes(`5120${'11'.repeat(32)}`))).toBe(330n);
    expect(dustThreshold(hexToBytes(`0020${'11'.repeat(32)}`))).toBe(330n);
    expect(dustThreshold(hexToBytes(`76a914${'11'.repeat(20)}88ac`))).toBe(546n);
    expect(dustThreshold(hexToBytes(`a914${'11'.repeat(20)}87`))).toBe(540n);
  });

  it('carries witness_utxo, PSBT_IN_SP_TWEAK and PSBT_IN_SP_SPEND_BIP32_DERIVATION per input, byte for byte', () => {
    const { spendPub, inputs } = wallet(2);
    const sweep = createSweepPsbt(inputs, spendPub, P2WPKH, 2);
    expect(sweep.vsize).toBe(sweepVsize(2, P2WPKH));
    expect(sweep.feeSats).toBe(BigInt(2 * sweep.vsize));
    expect(sweep.amountSats).toBe(200_000n - sweep.feeSats);
    const { maps, tx } = decodePsbt(sweep.psbt);
    expect(Buffer.from(sweep.psbt.subarray(0, 5)).toString('latin1')).toBe('psbt\xff');
    // Version 0: the unsigned transaction in the global map, no PSBT_GLOBAL_VERSION.
    expect(maps.global.map((r) => bytesToHex(r.key))).toEqual(['00']);
    expect(tx.version).toBe(2);
    expect(tx.inputsLength).toBe(2);
    expect(tx.getOutput(0).amount).toBe(sweep.amountSats);
    maps.inputs.forEach((records, i) => {
      const input = inputs[i]!;
      expect(tx.getInput(i)).toMatchObject({ index: input.vout, sequence: 0xfffffffd });
      expect(bytesToHex(tx.getInput(i).txid!)).toBe(input.txid);
      expect(records.map((r) => ({ key: bytesToHex(r.key), value: bytesToHex(r.value) }))).toEqual([
        { key: bytesToHex(Uint8Array.of(PSBT_IN_WITNESS_UTXO)), value: `a086010000000000225120${input.outputKey}` },
        { key: `${PSBT_IN_SP_SPEND_BIP32_DERIVATION.toString(16)}${bytesToHex(spendPub)}`, value: bytesToHex(keyFingerprint4(spendPub)) },
        { key: PSBT_IN_SP_TWEAK.toString(16), value: input.tweak },
      ]);
    });
    expect(maps.outputs).toEqual([[]]);
  });

  it('signs, finalizes and extracts: valid BIP-340 signatures over BIP-341 messages, the size as computed, BIP-376 fields removed', () => {
    const { secret, spendPub, inputs } = wallet(3, [50_000n, 70_000n, 1_000n]);
    const sweep = createSweepPsbt(inputs, spendPub, P2WPKH, 3.5);
    const signed = signSweepPsbt(sweep.psbt, secret);
    const tx = btc.Transaction.fromRaw(hexToBytes(signed.hex), { allowUnknownOutputs: true });
    expect(tx.id).toBe(signed.txid);
    expect(tx.vsize).toBe(sweep.vsize);
    expect(sweep.feeSats).toBe(BigInt(Math.ceil(3.5 * sweep.vsize)));
    const scripts = inputs.map((i) => hexToBytes(`5120${i.outputKey}`));
    const amounts = inputs.map((i) => i.amountSats);
    for (let i = 0; i < inputs.length; i++) {
      const witness = tx.getInput(i).finalScriptWitness!;
      expect(witness).toHaveLength(1);
      expect(witness[0]).toHaveLength(64);
      const message = tx.preimageWitnessV1(i, scripts, btc.SigHash.DEFAULT, amounts);
      expect(schnorr.verify(witness[0]!, message, hexToBytes(inputs[i]!.outputKey))).toBe(true);
    }
    const finalized = decodePsbt(signed.finalized).maps;
    for (const records of finalized.inputs) expect(records.map((r) => r.key[0])).toEqual([PSBT_IN_WITNESS_UTXO, 0x08]);
  });

  it('signs outputs whose key has an odd y (the secret negated, BIP-340)', () => {
    // Draw until both parities are covered among 8 inputs.
    let w = wallet(8);
    const parity = (i: SweepInput) => secp256k1.Point.BASE.multiply((toBig(w.secret) + BigInt(`0x${i.tweak}`)) % N).toBytes(true)[0];
    while (new Set(w.inputs.map(parity)).size < 2) w = wallet(8);
    const signed = signSweepPsbt(createSweepPsbt(w.inputs, w.spendPub, P2WPKH, 1).psbt, w.secret);
    expect(signed.hex).toMatch(/^02000000/);
  });

  it('refuses inputs that are not ours and malformed PSBTs', () => {
    const { secret, spendPub, inputs } = wallet(2);
    const other = wallet(1);
    // Another spend key: PSBT_IN_SP_SPEND_BIP32_DERIVATION names another key.
    expect(() => signSweepPsbt(createSweepPsbt(inputs, spendPub, P2WPKH, 1).psbt, other.secret)).toThrow(
      /input 0 is for another spend key/,
    );
    // The right spend key but an output locked to another key.
    const forged = [inputs[0]!, { ...inputs[1]!, outputKey: other.inputs[0]!.outputKey }];
    expect(() => signSweepPsbt(createSweepPsbt(forged, spendPub, P2WPKH, 1).psbt, secret)).toThrow(
      /input 1 is not ours: b_spend \+ tweak gives the key/,
    );
    expect(() => decodePsbt(Buffer.from('not a psbt'))).toThrow(PsbtError);
    const good = createSweepPsbt(inputs, spendPub, P2WPKH, 1).psbt;
    expect(() => decodePsbt(good.subarray(0, good.length - 3))).toThrow('PSBT truncated');
    expect(() => decodePsbt(Buffer.from('70736274ffff', 'hex'))).toThrow(new PsbtError('PSBT truncated'));
    expect(() => decodePsbt(Buffer.from('70736274ff' + 'ff'.repeat(9), 'hex'))).toThrow(new PsbtError('PSBT has a size too large'));
    expect(() => createSweepPsbt(inputs, spendPub, P2WPKH, 10_000)).toThrow(/worth less than the fee/);
    expect(() => addressScript('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'regtest')).toThrow('not a valid regtest address');
  });
});

describe('cli', () => {
  function io(files: Record<string, string | Buffer>, stdin = ''): CliIo & { out: string; err: string } {
    const result = {
      out: '',
      err: '',
      stdout: (t: string) => (result.out += t),
      stderr: (t: string) => (result.err += t),
      readStdin: () => Buffer.from(stdin),
      readFile: (path: string) => {
        const data = files[path];
        if (data === undefined) throw Object.assign(new Error(`no such file ${path}`), { code: 'ENOENT' });
        return Buffer.from(data);
      },
    };
    return result;
  }

  it('signs a PSBT from a file or stdin and prints the raw transaction', () => {
    const { secret, spendPub, inputs } = wallet(2);
    const psbt = Buffer.from(createSweepPsbt(inputs, spendPub, P2WPKH, 1).psbt).toString('base64');
    const files = { 'sweep.psbt': `${psbt}\n`, 'spend.secret': `${bytesToHex(secret)}\n` };
    const a = io(files);
    expect(runCli(['sign', '--psbt', 'sweep.psbt', '--spend-secret', 'spend.secret'], a)).toBe(0);
    expect(a.out).toMatch(/^020000000001[0-9a-f]+\n$/);
    const b = io(files, psbt);
    expect(runCli(['sign', '--psbt=-', '--spend-secret=spend.secret'], b)).toBe(0);
    expect(btc.Transaction.fromRaw(hexToBytes(b.out.trim())).id).toBe(btc.Transaction.fromRaw(hexToBytes(a.out.trim())).id);
  });

  it('answers --help, one line and exit 2 for bad usage, one line and exit 1 for a PSBT not ours', () => {
    const h = io({});
    expect(runCli(['--help'], h)).toBe(0);
    expect(h.out).toBe(`${USAGE}\n`);
    for (const args of [['sign', '--psbt', 'x', '--bogus'], ['sweep'], ['sign', '--psbt', 'x'], ['sign', '--psbt']]) {
      const r = io({});
      expect(runCli(args, r)).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/^error: /);
    }
    const { spendPub, inputs } = wallet(1);
    const other = wallet(1);
    const r = io({ p: Buffer.from(createSweepPsbt(inputs, spendPub, P2WPKH, 1).psbt), s: bytesToHex(other.secret) });
    expect(runCli(['sign', '--psbt', 'p', '--spend-secret', 's'], r)).toBe(1);
    expect(r.err).toMatch(/^error: input 0 is for another spend key .*\n$/);
    expect(r.out).toBe('');
    const missing = io({});
    expect(runCli(['sign', '--psbt', 'p', '--spend-secret', 's'], missing)).toBe(1);
    expect(missing.err).toMatch(/^error: ENOENT/);
  });
});
