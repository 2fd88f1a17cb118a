import { createHash, hash } from 'node:crypto';
import {
  computeTweaksOfPacked,
  isP2trHex,
  NO_PREVOUT_HEIGHT,
  PACKED_TWEAK_BYTES,
  readPackedOutputs,
  TAPROOT_SPEND_BYTES,
  type AnySecp256k1Backend,
  type PackedBlockAnswer,
  type RpcVin,
  type RpcVout,
  type ScanInput,
} from '@repo/bip352';
import { btcToSats } from '../amount';
import { buildGcsFilter, filterKey } from './gcs';

/** A transaction of Bitcoin Core's `getblock <hash> 3` answer: the fields the index reads. */
export interface RpcBlockTx {
  txid: string;
  vin: RpcVin[];
  vout: RpcVout[];
}

/** Bitcoin Core's `getblock <hash> 3` answer: the fields the index reads. */
export interface RpcBlock {
  hash: string;
  height: number;
  version: number;
  previousblockhash?: string;
  merkleroot: string;
  time: number;
  bits: string;
  nonce: number;
  tx: RpcBlockTx[];
}

/** A taproot output of an indexed transaction. */
export interface IndexedOutput {
  vout: number;
  /** satoshis. */
  value: bigint;
  /** the x-only output key, 32 bytes. */
  xonly: Uint8Array;
}

/** A silent-payment-eligible transaction: its txid, tweak (input_hash·A, compressed) and taproot outputs. */
export interface IndexedTx {
  /** hex, as displayed. */
  txid: string;
  /** 33 bytes. */
  tweak: Uint8Array;
  outputs: IndexedOutput[];
}

/** A taproot output spent in the block: the outpoint, the spending transaction, and the height of the block that created the output. */
export interface SpentOutpoint {
  txid: string;
  vout: number;
  spender: string;
  outHeight: number;
}

/** Everything the index keeps of one block (docs/silent-payments.md, "The tweak index (light wallets)"). */
export interface BlockRecord {
  height: number;
  /** hex, as displayed. */
  hash: string;
  /** the 80-byte header. */
  header: Uint8Array;
  time: number;
  txs: IndexedTx[];
  spent: SpentOutpoint[];
  /** BlindBit's filter of the block's new taproot output keys (x-only, every transaction). */
  newOutputsFilter: Uint8Array;
  /** BlindBit's filter of the block's spent taproot outpoints (their 8-byte hashes). */
  spentFilter: Uint8Array;
}

function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

/** The fields of `getblock` the header is made of. */
type HeaderFields = Pick<RpcBlock, 'hash' | 'version' | 'previousblockhash' | 'merkleroot' | 'time' | 'bits' | 'nonce'>;

/** The 80-byte block header from the fields of `getblock` (version, hashes reversed, time, bits, nonce). */
export function headerFromRpc(block: HeaderFields): Uint8Array {
  const version = Buffer.alloc(4);
  version.writeInt32LE(block.version, 0);
  const prev = block.previousblockhash === undefined ? Buffer.alloc(32) : Buffer.from(block.previousblockhash, 'hex').reverse();
  const header = Buffer.concat([
    version,
    prev,
    Buffer.from(block.merkleroot, 'hex').reverse(),
    u32le(block.time),
    u32le(Number.parseInt(block.bits, 16)),
    u32le(block.nonce),
  ]);
  const hash = createHash('sha256').update(createHash('sha256').update(header).digest()).digest().reverse().toString('hex');
  if (hash !== block.hash) throw new TypeError(`block ${block.hash}: the header built from its fields hashes to ${hash}`);
  return Uint8Array.from(header);
}

/**
 * BlindBit's short hash of each outpoint spent in the block of `blockHash`: the first 8 bytes of
 * SHA-256(txid (internal order) || vout (u32 LE) || spending block's hash (internal order)); one
 * message buffer for all, the block's part written once.
 */
export function spentOutpointHashes(spent: ReadonlyArray<{ txid: string; vout: number }>, blockHash: string): Uint8Array[] {
  const message = Buffer.alloc(68);
  message.write(blockHash, 36, 'hex');
  message.subarray(36).reverse();
  return spent.map((s) => {
    message.write(s.txid, 0, 'hex');
    message.subarray(0, 32).reverse();
    message.writeUInt32LE(s.vout, 32);
    return Uint8Array.prototype.slice.call(hash('sha256', message, 'buffer'), 0, 8);
  });
}

/** The taproot outputs of a transaction; `where` names it in the error. @throws {TypeError} for a value that is not an amount. */
export function readTaprootOutputs(tx: RpcBlockTx, where: string): IndexedOutput[] {
  const outputs: IndexedOutput[] = [];
  for (const o of tx.vout) {
    const hex = o.scriptPubKey?.hex;
    if (!isP2trHex(hex) || !/^[0-9a-fA-F]+$/.test(hex)) continue;
    let value: bigint;
    try {
      value = btcToSats(o.value);
    } catch {
      throw new TypeError(`${where} vout ${o.n}: value is not an amount`);
    }
    outputs.push({ vout: o.n, value, xonly: Uint8Array.from(Buffer.from(hex.slice(4), 'hex')) });
  }
  return outputs;
}

/** A transaction that may go into the index: its taproot outputs (none empty) and its scan inputs. */
export interface IndexCandidate {
  txid: string;
  outputs: IndexedOutput[];
  inputs: ScanInput[];
}

/** Packed transactions whose tweaks are computed between two turns of the event loop (a dense block's take about 20 ms). */
const TWEAKS_AT_ONCE = 256;

/**
 * The tweak of each packed transaction of `block` that has one, by its offset: `@repo/bip352`'s
 * computeTweaksOfPacked (in C, eight at a time, with the native backend), {@link TWEAKS_AT_ONCE}
 * transactions a call with a turn of the event loop between calls, so requests stay served.
 */
async function tweaksOf(block: PackedBlockAnswer, backend: AnySecp256k1Backend): Promise<Map<number, Uint8Array>> {
  const { jobs, offsets } = block;
  const tweaks = new Map<number, Uint8Array>();
  for (let start = 0; start < offsets.length; start += TWEAKS_AT_ONCE) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const base = offsets[start]!;
    const end = start + TWEAKS_AT_ONCE < offsets.length ? offsets[start + TWEAKS_AT_ONCE]! : jobs.length;
    const records = computeTweaksOfPacked(jobs.subarray(base, end), backend);
    const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
    for (let at = 0; at < records.length; at += PACKED_TWEAK_BYTES) {
      if (records[at + 4] !== 0) tweaks.set(base + view.getUint32(at, true), records.subarray(at + 4, at + PACKED_TWEAK_BYTES));
    }
  }
  return tweaks;
}

/** The candidates that are eligible (`tweaks[i]` of candidate i not null: computeTweaks of their inputs), with their tweaks. */
export function withTweaks(candidates: readonly IndexCandidate[], tweaks: ReadonlyArray<Uint8Array | null>): IndexedTx[] {
  const txs: IndexedTx[] = [];
  tweaks.forEach((tweak, i) => {
    const { txid, outputs } = candidates[i]!;
    if (tweak !== null) txs.push({ txid, tweak, outputs });
  });
  return txs;
}

/** The taproot outpoints a block spends, from its packed answer's records. @throws {TypeError} for one whose prevout came without its height. */
function readTaprootSpends(records: Uint8Array): SpentOutpoint[] {
  const buf = Buffer.from(records.buffer, records.byteOffset, records.byteLength);
  const spent: SpentOutpoint[] = [];
  for (let at = 0; at < buf.length; at += TAPROOT_SPEND_BYTES) {
    const spender = buf.toString('hex', at + 40, at + 72);
    const outHeight = buf.readUInt32LE(at + 36);
    if (outHeight === NO_PREVOUT_HEIGHT) throw new TypeError(`tx ${spender}: a prevout without its height`);
    spent.push({ txid: buf.toString('hex', at, at + 32), vout: buf.readUInt32LE(at + 32), spender, outHeight });
  }
  return spent;
}

/** The index's part of each packed transaction (txid and taproot outputs, by offset); its inputs are the tweaks'. */
function readCandidates(jobs: Uint8Array, offsets: readonly number[]): Map<number, { txid: string; outputs: IndexedOutput[] }> {
  const candidates = new Map<number, { txid: string; outputs: IndexedOutput[] }>();
  for (const offset of offsets) {
    const { txid, outputs, values } = readPackedOutputs(jobs, offset);
    candidates.set(offset, {
      txid,
      outputs: outputs.map((o, i) => {
        try {
          return { vout: o.index, value: btcToSats(values[i]!), xonly: o.script.subarray(2) };
        } catch {
          throw new TypeError(`tx ${txid} vout ${o.index}: value is not an amount`);
        }
      }),
    });
  }
  return candidates;
}

/**
 * Reads one block, as the scanner read it (`@repo/bip352`'s packBlockAnswer of `getblock <hash>
 * 3`), into what the index stores: each eligible transaction with a taproot output (its tweak,
 * BIP-352 "Tweak Data", by `backend`: {@link tweaksOf}), the taproot outpoints it spends, and
 * BlindBit's two filters.
 * @throws {TypeError} for a block without its header's fields, with a transaction that could not
 *   be read, or with a taproot spend whose prevout has no height (the message names the transaction).
 */
export async function readBlock(block: PackedBlockAnswer, backend: AnySecp256k1Backend): Promise<BlockRecord> {
  if (block.header === undefined) throw new TypeError(`block ${block.hash}: no version, merkleroot, time, bits or nonce`);
  const [refused] = block.refused;
  if (refused !== undefined) throw new TypeError(`tx ${refused.txid}: ${refused.error}`);
  const header = headerFromRpc({ ...block.header, hash: block.hash, previousblockhash: block.previousblockhash });
  const spent = readTaprootSpends(block.taprootSpends);
  const candidates = readCandidates(block.jobs, block.offsets);
  const allKeys: Uint8Array[] = [];
  for (let at = 0; at < block.coinbaseKeys.length; at += 32) allKeys.push(block.coinbaseKeys.subarray(at, at + 32));
  for (const { outputs } of candidates.values()) for (const o of outputs) allKeys.push(o.xonly);
  const key = filterKey(block.hash);
  const newOutputsFilter = buildGcsFilter(key, allKeys);
  const spentFilter = buildGcsFilter(key, spentOutpointHashes(spent, block.hash));
  const tweaks = await tweaksOf(block, backend);
  const txs: IndexedTx[] = [];
  for (const [offset, candidate] of candidates) {
    const tweak = tweaks.get(offset);
    if (tweak !== undefined) txs.push({ ...candidate, tweak });
  }
  return {
    height: block.height,
    hash: block.hash.toLowerCase(),
    header,
    time: block.header.time,
    txs,
    spent,
    newOutputsFilter,
    spentFilter,
  };
}
