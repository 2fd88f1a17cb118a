import { RawTx } from '@scure/btc-signer';
import { amount, bytesToHex, hexToBytes, reverseHex, sha256d } from './encoding';
import { scriptPubKeyJson, scriptToAsm, type AddressParams } from './script';

/** One input of a decoded transaction. */
export interface TxInput {
  /** Display-order txid of the spent output. */
  txid: string;
  vout: number;
  scriptSig: Uint8Array;
  sequence: number;
  witness: Uint8Array[];
}

/** One output of a decoded transaction. */
export interface TxOutput {
  value: bigint;
  script: Uint8Array;
}

/** A transaction decoded once, with the figures getrawtransaction shows. */
export interface DecodedTx {
  txid: string;
  /** wtxid (Core's `hash`). */
  hash: string;
  version: number;
  locktime: number;
  inputs: TxInput[];
  outputs: TxOutput[];
  /** Full serialization (with witness), hex. */
  hex: string;
  size: number;
  vsize: number;
  weight: number;
  /** Size without witness data. */
  strippedSize: number;
  isCoinbase: boolean;
}

/** A spent output as the undo data keeps it (verbosity 3 `prevout`, fees). */
export interface Coin {
  value: bigint;
  script: Uint8Array;
  height: number;
  coinbase: boolean;
}

const NULL_TXID = '0'.repeat(64);

/**
 * Decodes a serialized transaction (with or without witness). Throws a RangeError when the
 * bytes are not exactly one transaction with at least one input, as Core's DecodeHexTx.
 */
export function decodeTx(input: string | Uint8Array): DecodedTx {
  const bytes = typeof input === 'string' ? hexToBytes(input) : input;
  const raw = RawTx.decode(bytes);
  if (raw.inputs.length === 0) throw new RangeError('transaction has no inputs');
  const hasWitness = raw.segwitFlag && (raw.witnesses ?? []).some((w) => w.length > 0);
  const stripped = hasWitness ? RawTx.encode({ ...raw, segwitFlag: false, witnesses: undefined }) : bytes;
  const full = hasWitness ? RawTx.encode(raw) : stripped;
  const txid = reverseHex(sha256d(stripped));
  const weight = stripped.length * 3 + full.length;
  const inputs: TxInput[] = raw.inputs.map((inp, i) => ({
    txid: bytesToHex(inp.txid),
    vout: inp.index,
    scriptSig: inp.finalScriptSig,
    sequence: inp.sequence,
    witness: hasWitness ? (raw.witnesses?.[i] ?? []) : [],
  }));
  const first = inputs[0] as TxInput;
  return {
    txid,
    hash: hasWitness ? reverseHex(sha256d(full)) : txid,
    version: raw.version,
    locktime: raw.lockTime,
    inputs,
    outputs: raw.outputs.map((o) => ({ value: o.amount, script: o.script })),
    hex: bytesToHex(full),
    size: full.length,
    vsize: Math.ceil(weight / 4),
    weight,
    strippedSize: stripped.length,
    isCoinbase: inputs.length === 1 && first.txid === NULL_TXID && first.vout === 0xffffffff,
  };
}

/** Options of {@link txToJson}. */
export interface TxJsonOptions {
  params: AddressParams;
  /** Spent coins, one per input (absent for coinbases and when undo data is not used). */
  undo?: Coin[];
  /** Show `fee` (verbosity 2+ with undo data). */
  fee?: boolean;
  /** Show `vin[].prevout` (verbosity 3, getrawtransaction verbosity 2). */
  prevout?: boolean;
  /** Show `hex` (always, except getblock lists it per tx too). */
  hex?: boolean;
}

/** Core's TxToUniv: the decoded transaction object of getrawtransaction and getblock. */
export function txToJson(tx: DecodedTx, options: TxJsonOptions): Record<string, unknown> {
  const undo = tx.isCoinbase ? undefined : options.undo;
  const vin = tx.inputs.map((inp, i) => {
    const entry: Record<string, unknown> = {};
    if (tx.isCoinbase) {
      entry.coinbase = bytesToHex(inp.scriptSig);
    } else {
      entry.txid = inp.txid;
      entry.vout = inp.vout;
      entry.scriptSig = { asm: scriptToAsm(inp.scriptSig, true), hex: bytesToHex(inp.scriptSig) };
    }
    if (inp.witness.length > 0) entry.txinwitness = inp.witness.map(bytesToHex);
    const coin = undo?.[i];
    if (options.prevout && coin) {
      entry.prevout = {
        generated: coin.coinbase,
        height: coin.height,
        value: amount(coin.value),
        scriptPubKey: scriptPubKeyJson(coin.script, options.params),
      };
    }
    entry.sequence = inp.sequence;
    return entry;
  });
  const vout = tx.outputs.map((o, n) => ({ value: amount(o.value), n, scriptPubKey: scriptPubKeyJson(o.script, options.params) }));
  const json: Record<string, unknown> = {
    txid: tx.txid,
    hash: tx.hash,
    version: tx.version,
    size: tx.size,
    vsize: tx.vsize,
    weight: tx.weight,
    locktime: tx.locktime,
    vin,
    vout,
  };
  if (options.fee && undo) {
    const valueIn = undo.reduce((s, c) => s + c.value, 0n);
    const valueOut = tx.outputs.reduce((s, o) => s + o.value, 0n);
    json.fee = amount(valueIn - valueOut);
  }
  if (options.hex !== false) json.hex = tx.hex;
  return json;
}
