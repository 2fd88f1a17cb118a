import { createHash } from 'node:crypto';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import * as btc from '@scure/btc-signer';
import { compactSize, concatBytes, readCompactSize, u32le, u64le } from '@repo/bip352';
import { bytesToHex, hexToBytes } from '@repo/crypto';
import type { SpNetwork } from './config';

/** BIP-174 key types used here. */
export const PSBT_GLOBAL_UNSIGNED_TX = 0x00;
export const PSBT_IN_WITNESS_UTXO = 0x01;
export const PSBT_IN_FINAL_SCRIPTWITNESS = 0x08;
/** BIP-376: key 0x1f || the 33-byte spend public key, value the BIP-32 fingerprint and path of that key. */
export const PSBT_IN_SP_SPEND_BIP32_DERIVATION = 0x1f;
/** BIP-376: no key data, value the 32-byte tweak (the spending key is b_spend + tweak). */
export const PSBT_IN_SP_TWEAK = 0x20;

const MAGIC = Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff);
const CURVE_N = secp256k1.Point.CURVE().n;
/** nSequence of the inputs: final for locktime, signals replaceability (BIP-125) so a low fee can be bumped. */
export const SWEEP_SEQUENCE = 0xfffffffd;
/** Lowest and highest fee rate accepted by `POST /psbt` (sat/vB). */
export const FEE_RATE_MIN = 1;
export const FEE_RATE_MAX = 10_000;

/** A key-value record of a PSBT map (the key includes its type byte). */
export interface PsbtRecord {
  key: Uint8Array;
  value: Uint8Array;
}

/** A PSBT as its three kinds of maps (BIP-174). */
export interface PsbtMaps {
  global: PsbtRecord[];
  inputs: PsbtRecord[][];
  outputs: PsbtRecord[][];
}

/** A malformed PSBT, or one this signer refuses (not ours, missing fields). */
export class PsbtError extends Error {
  override readonly name = 'PsbtError';
}

/** Serialises the maps (BIP-174: magic, global map, one map per input, one per output, each ended by 0x00). */
export function encodePsbt(maps: PsbtMaps): Uint8Array {
  const map = (records: PsbtRecord[]) =>
    concatBytes(...records.flatMap((r) => [compactSize(r.key.length), r.key, compactSize(r.value.length), r.value]), Uint8Array.of(0));
  return concatBytes(MAGIC, map(maps.global), ...maps.inputs.map(map), ...maps.outputs.map(map));
}

/**
 * Parses a version 0 PSBT (BIP-174) into its maps, taking the number of input and output maps
 * from the unsigned transaction. Throws a PsbtError for bad magic, truncated data, a duplicate
 * key, a missing unsigned transaction or trailing bytes.
 */
export function decodePsbt(bytes: Uint8Array): { maps: PsbtMaps; tx: btc.Transaction } {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b))
    throw new PsbtError('not a PSBT (the magic bytes "psbt\\xff" are missing)');
  let at = MAGIC.length;
  const readSize = (): number => {
    const [size, next] = readCompactSize(
      bytes,
      at,
      (reason) => new PsbtError(reason === 'truncated' ? 'PSBT truncated' : 'PSBT has a size too large'),
    );
    at = next;
    return size;
  };
  const readBytes = (n: number): Uint8Array => {
    if (at + n > bytes.length) throw new PsbtError('PSBT truncated');
    const out = bytes.slice(at, at + n);
    at += n;
    return out;
  };
  const readMap = (): PsbtRecord[] => {
    const records: PsbtRecord[] = [];
    const seen = new Set<string>();
    for (;;) {
      const keyLength = readSize();
      if (keyLength === 0) return records;
      const key = readBytes(keyLength);
      const value = readBytes(readSize());
      const hex = bytesToHex(key);
      if (seen.has(hex)) throw new PsbtError(`PSBT has a duplicate key ${hex}`);
      seen.add(hex);
      records.push({ key, value });
    }
  };
  const global = readMap();
  const unsigned = global.find((r) => r.key.length === 1 && r.key[0] === PSBT_GLOBAL_UNSIGNED_TX);
  if (unsigned === undefined) throw new PsbtError('PSBT has no unsigned transaction (PSBT_GLOBAL_UNSIGNED_TX): only version 0 is read');
  let tx: btc.Transaction;
  try {
    tx = btc.Transaction.fromRaw(unsigned.value, { allowUnknownOutputs: true, allowUnknownInputs: true, disableScriptCheck: true });
  } catch (err) {
    throw new PsbtError(`PSBT's unsigned transaction cannot be parsed: ${(err as Error).message}`);
  }
  const inputs = Array.from({ length: tx.inputsLength }, readMap);
  const outputs = Array.from({ length: tx.outputsLength }, readMap);
  if (at !== bytes.length) throw new PsbtError('PSBT has bytes after its last map');
  return { maps: { global, inputs, outputs }, tx };
}

/** The bitcoin network of a BIP-352 network, for addresses. */
export function addressNetwork(network: SpNetwork): typeof btc.NETWORK {
  if (network === 'mainnet') return btc.NETWORK;
  if (network === 'regtest') return { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef };
  return btc.TEST_NETWORK;
}

/** The output script of `address` on `network`; throws a PsbtError when it is not an address of that network. */
export function addressScript(address: string, network: SpNetwork): Uint8Array {
  try {
    return btc.OutScript.encode(btc.Address(addressNetwork(network)).decode(address));
  } catch {
    throw new PsbtError(`"to" is not a valid ${network} address`);
  }
}

/**
 * The smallest output Bitcoin Core relays to `script` (its dust rule at the default 3 sat/vB
 * dust relay fee: 3 × (output size + the size of the input that would spend it); witness
 * programs count that input's witness at a quarter). P2WPKH 294, P2TR 330, P2PKH 546 sats.
 */
export function dustThreshold(script: Uint8Array): bigint {
  const outputSize = 8 + compactSize(script.length).length + script.length;
  const isWitness =
    script.length >= 4 &&
    script.length <= 42 &&
    (script[0] === 0 || (script[0]! >= 0x51 && script[0]! <= 0x60)) &&
    script[1] === script.length - 2;
  const spendSize = isWitness ? 32 + 4 + 1 + Math.floor(107 / 4) + 4 : 32 + 4 + 1 + 107 + 4;
  return BigInt(3 * (outputSize + spendSize));
}

/**
 * The virtual size of the signed sweep: `inputs` taproot key-path inputs (BIP-341: a witness of
 * one 64-byte signature with SIGHASH_DEFAULT) and one output paying `script`. Weight =
 * 4 × non-witness bytes + witness bytes (BIP-141); vsize = ceil(weight / 4). Each input adds
 * 41 non-witness bytes and 66 witness bytes: 57.5 vB.
 */
export function sweepVsize(inputs: number, script: Uint8Array): number {
  const outputs = 1;
  const nonWitness =
    4 +
    compactSize(inputs).length +
    inputs * (32 + 4 + 1 + 4) +
    compactSize(outputs).length +
    8 +
    compactSize(script.length).length +
    script.length +
    4;
  const witness = 2 + inputs * (1 + 1 + 64);
  return Math.ceil((4 * nonWitness + witness) / 4);
}

/** One output to sweep. */
export interface SweepInput {
  txid: string;
  vout: number;
  amountSats: bigint;
  /** x-only output key, 64 hex. */
  outputKey: string;
  /** The whole private-key tweak, 64 hex (label tweak included). */
  tweak: string;
}

/** The BIP-32 fingerprint of a key: the first 4 bytes of HASH160 of its compressed form. */
export function keyFingerprint4(pub: Uint8Array): Uint8Array {
  const sha = createHash('sha256').update(pub).digest();
  return new Uint8Array(createHash('ripemd160').update(sha).digest().subarray(0, 4));
}

/** What {@link createSweepPsbt} answers. */
export interface SweepPsbt {
  psbt: Uint8Array;
  feeSats: bigint;
  vsize: number;
  amountSats: bigint;
  inputSats: bigint;
}

/**
 * Builds the unsigned sweep of `inputs` to `toScript` as a version 0 PSBT (BIP-174): version 2
 * transaction, locktime 0, replaceable inputs, one output of the total less the fee for the
 * real signed size at `feeRate` sat/vB. Each input carries PSBT_IN_WITNESS_UTXO, BIP-376's
 * PSBT_IN_SP_TWEAK and PSBT_IN_SP_SPEND_BIP32_DERIVATION keyed by B_spend with no derivation
 * path (the value is B_spend's own fingerprint: the key is its own root; the service never
 * knows where b_spend comes from). Throws a PsbtError when the output would be below dust.
 */
export function createSweepPsbt(inputs: SweepInput[], spendPub: Uint8Array, toScript: Uint8Array, feeRate: number): SweepPsbt {
  if (inputs.length === 0) throw new PsbtError('nothing to sweep');
  const inputSats = inputs.reduce((n, i) => n + i.amountSats, 0n);
  const vsize = sweepVsize(inputs.length, toScript);
  const feeSats = BigInt(Math.ceil(vsize * feeRate - 1e-9));
  const amountSats = inputSats - feeSats;
  const dust = dustThreshold(toScript);
  if (amountSats < dust) {
    throw new PsbtError(`the outputs (${inputSats} sats) are worth less than the fee (${feeSats} sats) plus dust (${dust} sats)`);
  }
  const unsignedTx = concatBytes(
    u32le(2),
    compactSize(inputs.length),
    ...inputs.flatMap((i) => [hexToBytes(i.txid).reverse(), u32le(i.vout), Uint8Array.of(0), u32le(SWEEP_SEQUENCE)]),
    compactSize(1),
    u64le(amountSats),
    compactSize(toScript.length),
    toScript,
    u32le(0),
  );
  const fingerprint = keyFingerprint4(spendPub);
  const psbt = encodePsbt({
    global: [{ key: Uint8Array.of(PSBT_GLOBAL_UNSIGNED_TX), value: unsignedTx }],
    inputs: inputs.map((i) => {
      const script = concatBytes(Uint8Array.of(0x51, 0x20), hexToBytes(i.outputKey));
      return [
        { key: Uint8Array.of(PSBT_IN_WITNESS_UTXO), value: concatBytes(u64le(i.amountSats), compactSize(script.length), script) },
        { key: concatBytes(Uint8Array.of(PSBT_IN_SP_SPEND_BIP32_DERIVATION), spendPub), value: fingerprint },
        { key: Uint8Array.of(PSBT_IN_SP_TWEAK), value: hexToBytes(i.tweak) },
      ];
    }),
    outputs: [[]],
  });
  return { psbt, feeSats, vsize, amountSats, inputSats };
}

function scalarBytes(d: bigint): Uint8Array {
  return hexToBytes(d.toString(16).padStart(64, '0'));
}

function readWitnessUtxo(value: Uint8Array, index: number): { amount: bigint; script: Uint8Array } {
  if (value.length < 9) throw new PsbtError(`input ${index}: PSBT_IN_WITNESS_UTXO is truncated`);
  const amount = new DataView(value.buffer, value.byteOffset, 8).getBigUint64(0, true);
  const length = value[8]!;
  if (length >= 0xfd || value.length !== 9 + length) throw new PsbtError(`input ${index}: PSBT_IN_WITNESS_UTXO is malformed`);
  return { amount, script: value.slice(9) };
}

/** What {@link signSweepPsbt} answers. */
export interface SignedSweep {
  /** The finalized PSBT (BIP-174 finalizer: witness set, other input fields but the UTXO cleared, BIP-376 fields removed). */
  finalized: Uint8Array;
  /** The network serialization of the signed transaction (hex). */
  hex: string;
  txid: string;
}

/**
 * The signer, finalizer and extractor of a silent-payment sweep (BIP-174 roles, BIP-376 fields):
 * for every input, the tweak of PSBT_IN_SP_TWEAK gives d = b_spend + tweak (mod n) (BIP-352,
 * "Spending"); when PSBT_IN_SP_SPEND_BIP32_DERIVATION is present its key must be B_spend; the
 * x-only key of d·G must be the taproot output key of PSBT_IN_WITNESS_UTXO, else the input is
 * not ours and nothing is signed. d is negated when d·G has an odd y (BIP-340), the input is
 * signed on the key path with SIGHASH_DEFAULT (BIP-341 signature message, BIP-340 Schnorr),
 * then finalized with the one-element witness and the transaction extracted. Throws a
 * PsbtError naming the input on any refusal. Needs no network.
 */
export function signSweepPsbt(psbtBytes: Uint8Array, spendSecret: Uint8Array): SignedSweep {
  if (spendSecret.length !== 32 || !secp256k1.utils.isValidSecretKey(spendSecret))
    throw new PsbtError('the spend secret is not a valid secp256k1 private key');
  const b = BigInt(`0x${bytesToHex(spendSecret)}`);
  const spendPub = secp256k1.getPublicKey(spendSecret, true);
  const { maps, tx } = decodePsbt(psbtBytes);
  const prevouts = maps.inputs.map((records, i) => {
    const utxo = records.find((r) => r.key.length === 1 && r.key[0] === PSBT_IN_WITNESS_UTXO);
    if (utxo === undefined) throw new PsbtError(`input ${i} has no PSBT_IN_WITNESS_UTXO: not one of ours`);
    return readWitnessUtxo(utxo.value, i);
  });
  const keys = maps.inputs.map((records, i) => {
    const { script } = prevouts[i]!;
    if (script.length !== 34 || script[0] !== 0x51 || script[1] !== 0x20)
      throw new PsbtError(`input ${i} does not spend a taproot output: not one of ours`);
    const tweak = records.find((r) => r.key.length === 1 && r.key[0] === PSBT_IN_SP_TWEAK);
    if (tweak === undefined || tweak.value.length !== 32) {
      throw new PsbtError(`input ${i} has no PSBT_IN_SP_TWEAK (32 bytes): not a silent-payment output`);
    }
    const derivations = records.filter((r) => r.key[0] === PSBT_IN_SP_SPEND_BIP32_DERIVATION);
    if (derivations.length > 0 && !derivations.some((r) => r.key.length === 34 && bytesToHex(r.key.subarray(1)) === bytesToHex(spendPub))) {
      throw new PsbtError(`input ${i} is for another spend key (PSBT_IN_SP_SPEND_BIP32_DERIVATION): not one of ours`);
    }
    const t = BigInt(`0x${bytesToHex(tweak.value)}`);
    if (t >= CURVE_N) throw new PsbtError(`input ${i}: the tweak is not below the curve order`);
    let d = (b + t) % CURVE_N;
    if (d === 0n) throw new PsbtError(`input ${i}: b_spend + tweak is zero`);
    const point = secp256k1.Point.BASE.multiply(d);
    const xonly = point.toBytes(true).subarray(1);
    const expected = script.subarray(2);
    if (bytesToHex(xonly) !== bytesToHex(expected)) {
      throw new PsbtError(
        `input ${i} is not ours: b_spend + tweak gives the key ${bytesToHex(xonly)}, the output is locked to ${bytesToHex(expected)}`,
      );
    }
    if (point.toBytes(true)[0] === 0x03) d = CURVE_N - d;
    return { d, xonly };
  });
  const scripts = prevouts.map((p) => p.script);
  const amounts = prevouts.map((p) => p.amount);
  const signatures = keys.map(({ d, xonly }, i) => {
    const message = tx.preimageWitnessV1(i, scripts, btc.SigHash.DEFAULT, amounts);
    const signature = schnorr.sign(message, scalarBytes(d));
    if (!schnorr.verify(signature, message, xonly)) throw new PsbtError(`input ${i}: the signature does not verify`);
    return signature;
  });
  // Finalizer: the witness is the signature alone; keep the UTXO, drop the rest (BIP-174, BIP-376).
  const finalized = encodePsbt({
    global: maps.global,
    inputs: maps.inputs.map((records, i) => [
      ...records.filter((r) => r.key.length === 1 && r.key[0] === PSBT_IN_WITNESS_UTXO),
      { key: Uint8Array.of(PSBT_IN_FINAL_SCRIPTWITNESS), value: concatBytes(compactSize(1), compactSize(64), signatures[i]!) },
    ]),
    outputs: maps.outputs,
  });
  // Extractor.
  for (let i = 0; i < tx.inputsLength; i++) {
    tx.updateInput(i, { witnessUtxo: prevouts[i]!, finalScriptWitness: [signatures[i]!] }, true);
  }
  const raw = tx.extract();
  return { finalized, hex: bytesToHex(raw), txid: tx.id };
}
