import { parseHex } from './bytes';
import type { ScanInput, ScanOutput } from './inputs';

/**
 * One `vin` entry of Bitcoin Core's `getblock` (verbosity 3) or `getrawtransaction` (verbosity
 * 2): hex fields as Core prints them, `prevout` present when Core knows the spent output.
 */
export interface RpcVin {
  txid?: string;
  vout?: number;
  coinbase?: string;
  scriptSig?: { asm?: string; hex: string };
  txinwitness?: string[];
  prevout?: { scriptPubKey: { hex: string; [field: string]: unknown }; [field: string]: unknown };
  sequence?: number;
  [field: string]: unknown;
}

/**
 * Converts Core's `vin` array to scan inputs: txinwitness (array of hex items) → witness,
 * scriptSig.hex → scriptSig, prevout.scriptPubKey.hex → prevoutScript. A coinbase transaction
 * has no eligible input: [].
 * @throws {TypeError} when an input lacks txid/vout or its prevout (verbosity too low), or a hex
 *   field is malformed; the message names the input.
 */
export function scanInputsFromRpc(vin: readonly RpcVin[]): ScanInput[] {
  if (!Array.isArray(vin)) throw new TypeError('"vin" expected an array');
  if (vin.some((entry) => entry && typeof entry.coinbase === 'string')) return [];
  return vin.map((entry, i) => {
    const where = `vin[${i}]`;
    if (typeof entry?.txid !== 'string' || typeof entry.vout !== 'number') {
      throw new TypeError(`${where}: expected txid and vout`);
    }
    const spk = entry.prevout?.scriptPubKey?.hex;
    if (typeof spk !== 'string') {
      throw new TypeError(`${where}: no prevout.scriptPubKey.hex (use getblock verbosity 3 or getrawtransaction verbosity 2)`);
    }
    const witness = entry.txinwitness ?? [];
    if (!Array.isArray(witness)) throw new TypeError(`${where}.txinwitness expected an array of hex strings`);
    return {
      txid: parseHex(entry.txid, `${where}.txid`, 32) && entry.txid.toLowerCase(),
      vout: entry.vout,
      scriptSig: entry.scriptSig ? parseHex(entry.scriptSig.hex, `${where}.scriptSig.hex`) : new Uint8Array(0),
      witness: witness.map((item, j) => parseHex(item, `${where}.txinwitness[${j}]`)),
      prevoutScript: parseHex(spk, `${where}.prevout.scriptPubKey.hex`),
    };
  });
}

/** One `vout` entry of Bitcoin Core's `getblock` / `getrawtransaction` (verbose): the fields read here. */
export interface RpcVout {
  n: number;
  value: number;
  scriptPubKey: { hex: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** Whether a scriptPubKey in hex looks like P2TR (OP_1 OP_PUSHBYTES_32 <32 bytes>, BIP-341); its hex is checked by scanOutputsFromRpc. */
export function isP2trHex(hex: unknown): boolean {
  return typeof hex === 'string' && hex.length === 68 && hex.startsWith('5120');
}

/**
 * The taproot outputs of Core's `vout` array (only they can be silent payments) as scan outputs,
 * with the value (BTC) of each in `values`; the other outputs are left out ([] when none).
 * @throws {TypeError} when a taproot output's script is not hex; the message names the output.
 */
export function scanOutputsFromRpc(vout: readonly RpcVout[]): { outputs: ScanOutput[]; values: number[] } {
  if (!Array.isArray(vout)) throw new TypeError('"vout" expected an array');
  const outputs: ScanOutput[] = [];
  const values: number[] = [];
  for (const o of vout) {
    const hex = o?.scriptPubKey?.hex;
    if (!isP2trHex(hex)) continue;
    outputs.push({ index: o.n, script: parseHex(hex, `vout[${o.n}].scriptPubKey.hex`, 34) });
    values.push(o.value);
  }
  return { outputs, values };
}
