import { bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { OP } from '@scure/btc-signer';
import { bytesToHex, concatBytes } from './encoding';

/** Address parameters of a chain (Bitcoin Core's chainparams). */
export interface AddressParams {
  bech32: string;
  pubKeyHash: number;
  scriptHash: number;
}

/** regtest (`bcrt`) and signet (`tb`) address parameters. */
export const ADDRESS_PARAMS = {
  regtest: { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4 },
  signet: { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4 },
} as const satisfies Record<string, AddressParams>;

const base58check = createBase58check(sha256);

/** One parsed script operation: an opcode, with its pushed data for push opcodes. */
export interface ScriptOp {
  op: number;
  data?: Uint8Array;
}

/** Parses a script like CScript::GetOp; `ok` is false when a push runs past the end. */
export function parseScript(script: Uint8Array): { ops: ScriptOp[]; ok: boolean } {
  const ops: ScriptOp[] = [];
  let i = 0;
  while (i < script.length) {
    const op = script[i++] as number;
    if (op > OP.PUSHDATA4) {
      ops.push({ op });
      continue;
    }
    let size = op;
    if (op === OP.PUSHDATA1) {
      if (i + 1 > script.length) return { ops, ok: false };
      size = script[i] as number;
      i += 1;
    } else if (op === OP.PUSHDATA2) {
      if (i + 2 > script.length) return { ops, ok: false };
      size = (script[i] as number) | ((script[i + 1] as number) << 8);
      i += 2;
    } else if (op === OP.PUSHDATA4) {
      if (i + 4 > script.length) return { ops, ok: false };
      size = new DataView(script.buffer, script.byteOffset + i, 4).getUint32(0, true);
      i += 4;
    }
    if (i + size > script.length) return { ops, ok: false };
    ops.push({ op, data: script.subarray(i, i + size) });
    i += size;
  }
  return { ops, ok: true };
}

const OP_NAMES: Map<number, string> = (() => {
  const names = new Map<number, string>();
  for (const [name, code] of Object.entries(OP)) {
    if (typeof code !== 'number') continue;
    names.set(code, `OP_${name}`);
  }
  names.set(OP.OP_0, '0');
  names.set(OP['1NEGATE'], '-1');
  for (let n = 1; n <= 16; n++) names.set(0x50 + n, String(n));
  names.set(0xff, 'OP_INVALIDOPCODE');
  return names;
})();

/** CScriptNum of at most 4 bytes (little-endian, sign bit in the last byte). */
function scriptNum(data: Uint8Array): number {
  if (data.length === 0) return 0;
  let result = 0;
  for (let i = 0; i < data.length; i++) result += (data[i] as number) * 2 ** (8 * i);
  const last = data[data.length - 1] as number;
  if (last & 0x80) return -(result - 0x80 * 2 ** (8 * (data.length - 1)));
  return result;
}

/** BIP-66 strict DER signature check (Core's IsValidSignatureEncoding), sighash byte included. */
function isValidSignatureEncoding(sig: Uint8Array): boolean {
  const at = (i: number) => sig[i] as number;
  if (sig.length < 9 || sig.length > 73) return false;
  if (at(0) !== 0x30 || at(1) !== sig.length - 3) return false;
  const lenR = at(3);
  if (5 + lenR >= sig.length) return false;
  const lenS = at(5 + lenR);
  if (lenR + lenS + 7 !== sig.length) return false;
  if (at(2) !== 0x02 || lenR === 0 || at(4) & 0x80) return false;
  if (lenR > 1 && at(4) === 0x00 && !(at(5) & 0x80)) return false;
  if (at(lenR + 4) !== 0x02 || lenS === 0 || at(lenR + 6) & 0x80) return false;
  if (lenS > 1 && at(lenR + 6) === 0x00 && !(at(lenR + 7) & 0x80)) return false;
  return true;
}

const SIGHASH_NAMES = new Map<number, string>([
  [0x01, 'ALL'],
  [0x81, 'ALL|ANYONECANPAY'],
  [0x02, 'NONE'],
  [0x82, 'NONE|ANYONECANPAY'],
  [0x03, 'SINGLE'],
  [0x83, 'SINGLE|ANYONECANPAY'],
]);

/**
 * Core's ScriptToAsmStr: small pushes as numbers, other pushes as hex, opcodes by name;
 * with `sighashDecode` (scriptSig), DER signatures end with `[ALL]` and the like.
 */
export function scriptToAsm(script: Uint8Array, sighashDecode = false): string {
  const { ops, ok } = parseScript(script);
  const unspendable = (script.length > 0 && script[0] === OP.RETURN) || script.length > 10_000;
  const parts: string[] = [];
  for (const { op, data } of ops) {
    if (data === undefined) {
      parts.push(OP_NAMES.get(op) ?? 'OP_UNKNOWN');
    } else if (data.length <= 4) {
      parts.push(String(scriptNum(data)));
    } else if (sighashDecode && !unspendable && isValidSignatureEncoding(data) && SIGHASH_NAMES.has(data[data.length - 1] as number)) {
      parts.push(`${bytesToHex(data.subarray(0, -1))}[${SIGHASH_NAMES.get(data[data.length - 1] as number)}]`);
    } else {
      parts.push(bytesToHex(data));
    }
  }
  if (!ok) parts.push('[error]');
  return parts.join(' ');
}

/** Core's output types (GetTxnOutputType). */
export type OutputType =
  | 'nonstandard'
  | 'pubkey'
  | 'pubkeyhash'
  | 'scripthash'
  | 'multisig'
  | 'nulldata'
  | 'anchor'
  | 'witness_v0_keyhash'
  | 'witness_v0_scripthash'
  | 'witness_v1_taproot'
  | 'witness_unknown';

/** The witness version and program of a witness output, or undefined. */
export function witnessProgram(script: Uint8Array): { version: number; program: Uint8Array } | undefined {
  if (script.length < 4 || script.length > 42) return undefined;
  const v = script[0] as number;
  if (v !== 0 && (v < 0x51 || v > 0x60)) return undefined;
  if ((script[1] as number) + 2 !== script.length) return undefined;
  return { version: v === 0 ? 0 : v - 0x50, program: script.subarray(2) };
}

function isPubkey(data: Uint8Array | undefined): data is Uint8Array {
  if (data === undefined) return false;
  if (data.length === 33) return data[0] === 2 || data[0] === 3;
  if (data.length === 65) return data[0] === 4;
  return false;
}

/** Classifies an output script like Core's Solver. */
export function classifyScript(script: Uint8Array): OutputType {
  const wp = witnessProgram(script);
  if (wp) {
    if (wp.version === 0 && wp.program.length === 20) return 'witness_v0_keyhash';
    if (wp.version === 0 && wp.program.length === 32) return 'witness_v0_scripthash';
    if (wp.version === 1 && wp.program.length === 32) return 'witness_v1_taproot';
    if (wp.version === 1 && wp.program.length === 2 && wp.program[0] === 0x4e && wp.program[1] === 0x73) return 'anchor';
    if (wp.version !== 0) return 'witness_unknown';
    return 'nonstandard';
  }
  if (script.length === 23 && script[0] === OP.HASH160 && script[1] === 20 && script[22] === OP.EQUAL) return 'scripthash';
  if (
    script.length === 25 &&
    script[0] === OP.DUP &&
    script[1] === OP.HASH160 &&
    script[2] === 20 &&
    script[23] === OP.EQUALVERIFY &&
    script[24] === OP.CHECKSIG
  ) {
    return 'pubkeyhash';
  }
  const { ops, ok } = parseScript(script);
  if (script.length >= 1 && script[0] === OP.RETURN) {
    if (ok && ops.slice(1).every((o) => o.op <= 0x60)) return 'nulldata';
    return 'nonstandard';
  }
  if (!ok) return 'nonstandard';
  if (ops.length === 2 && ops[1]?.op === OP.CHECKSIG && isPubkey(ops[0]?.data)) return 'pubkey';
  if (ops.length >= 4 && ops[ops.length - 1]?.op === OP.CHECKMULTISIG) {
    const m = (ops[0]?.op ?? 0) - 0x50;
    const n = (ops[ops.length - 2]?.op ?? 0) - 0x50;
    const keys = ops.slice(1, -2);
    if (m >= 1 && n >= 1 && n <= 16 && m <= n && keys.length === n && keys.every((k) => isPubkey(k.data))) return 'multisig';
  }
  return 'nonstandard';
}

/** The address of an output script (Core's ExtractDestination + EncodeDestination), if it has one. */
export function scriptToAddress(script: Uint8Array, params: AddressParams, type: OutputType = classifyScript(script)): string | undefined {
  switch (type) {
    case 'pubkeyhash':
      return base58check.encode(concatBytes(Uint8Array.of(params.pubKeyHash), script.subarray(3, 23)));
    case 'scripthash':
      return base58check.encode(concatBytes(Uint8Array.of(params.scriptHash), script.subarray(2, 22)));
    case 'witness_v0_keyhash':
    case 'witness_v0_scripthash':
    case 'witness_v1_taproot':
    case 'anchor':
    case 'witness_unknown': {
      const wp = witnessProgram(script);
      if (!wp) return undefined;
      const words = [wp.version, ...bech32.toWords(wp.program)];
      return wp.version === 0 ? bech32.encode(params.bech32, words, 90) : bech32m.encode(params.bech32, words, 90);
    }
    default:
      return undefined;
  }
}

const INPUT_CHARSET = '0123456789()[],\'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#"\\ ';
const CHECKSUM_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATORS = [0xf5dee51989n, 0xa9fdca3312n, 0x1bab10e32dn, 0x3706b1677an, 0x644d626ffdn];

function descPolymod(symbols: number[]): bigint {
  let chk = 1n;
  for (const value of symbols) {
    const top = chk >> 35n;
    chk = ((chk & 0x7ffffffffn) << 5n) ^ BigInt(value);
    for (let i = 0; i < 5; i++) if ((top >> BigInt(i)) & 1n) chk ^= GENERATORS[i] as bigint;
  }
  return chk;
}

/** Appends the BIP-380 descriptor checksum: `addr(...)#f4gpyyez`. */
export function addDescriptorChecksum(desc: string): string {
  const symbols: number[] = [];
  let groups: number[] = [];
  for (const c of desc) {
    const v = INPUT_CHARSET.indexOf(c);
    if (v < 0) throw new RangeError(`descriptor has an invalid character ${JSON.stringify(c)}`);
    symbols.push(v & 31);
    groups.push(v >> 5);
    if (groups.length === 3) {
      symbols.push((groups[0] as number) * 9 + (groups[1] as number) * 3 + (groups[2] as number));
      groups = [];
    }
  }
  if (groups.length === 1) symbols.push(groups[0] as number);
  else if (groups.length === 2) symbols.push((groups[0] as number) * 3 + (groups[1] as number));
  const checksum = descPolymod([...symbols, 0, 0, 0, 0, 0, 0, 0, 0]) ^ 1n;
  let out = '';
  for (let i = 0; i < 8; i++) out += CHECKSUM_CHARSET[Number((checksum >> BigInt(5 * (7 - i))) & 31n)];
  return `${desc}#${out}`;
}

/** Core's InferDescriptor with no signing provider (what getblock/getrawtransaction show). */
export function inferDescriptor(script: Uint8Array, type: OutputType, address: string | undefined): string {
  let desc: string;
  if (type === 'witness_v1_taproot') desc = `rawtr(${bytesToHex(script.subarray(2))})`;
  else if (address !== undefined) desc = `addr(${address})`;
  else if (type === 'pubkey') desc = `pk(${bytesToHex(parseScript(script).ops[0]?.data ?? new Uint8Array())})`;
  else if (type === 'multisig') {
    const ops = parseScript(script).ops;
    const keys = ops.slice(1, -2).map((o) => bytesToHex(o.data ?? new Uint8Array()));
    desc = `multi(${(ops[0]?.op ?? 0x51) - 0x50},${keys.join(',')})`;
  } else desc = `raw(${bytesToHex(script)})`;
  return addDescriptorChecksum(desc);
}

/** The `scriptPubKey` object of Core's JSON (ScriptToUniv): asm, desc, hex, address?, type. */
export interface ScriptPubKeyJson {
  asm: string;
  desc: string;
  hex: string;
  address?: string;
  type: OutputType;
}

const scriptJsonCache = new Map<string, ScriptPubKeyJson>();

/** Builds (and memoizes, scripts repeat a lot) the `scriptPubKey` object of an output script. */
export function scriptPubKeyJson(script: Uint8Array, params: AddressParams): ScriptPubKeyJson {
  const hex = bytesToHex(script);
  const key = `${params.bech32}:${hex}`;
  const cached = scriptJsonCache.get(key);
  if (cached) return cached;
  const type = classifyScript(script);
  const address = scriptToAddress(script, params, type);
  const json: ScriptPubKeyJson = { asm: scriptToAsm(script), desc: inferDescriptor(script, type, address), hex, address, type };
  if (scriptJsonCache.size > 50_000) scriptJsonCache.clear();
  scriptJsonCache.set(key, json);
  return json;
}
