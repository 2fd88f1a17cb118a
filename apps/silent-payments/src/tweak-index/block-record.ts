import { createHash, hash } from 'node:crypto';
import { isP2trHex, scanInputsFromRpc, type RpcVin, type RpcVout, type ScanInput } from '@repo/bip352';
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

/** The 80-byte block header from the fields of `getblock` (version, hashes reversed, time, bits, nonce). */
export function headerFromRpc(block: RpcBlock): Uint8Array {
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

function spentTaproot(tx: RpcBlockTx, where: string): SpentOutpoint[] {
  const spent: SpentOutpoint[] = [];
  for (const input of tx.vin) {
    if (typeof input.coinbase === 'string') continue;
    if (isP2trHex(input.prevout?.scriptPubKey?.hex) && typeof input.txid === 'string' && typeof input.vout === 'number') {
      const outHeight = input.prevout?.height;
      if (typeof outHeight !== 'number' || !Number.isSafeInteger(outHeight) || outHeight < 0) {
        throw new TypeError(`${where}: a prevout without its height`);
      }
      spent.push({ txid: input.txid.toLowerCase(), vout: input.vout, spender: tx.txid, outHeight });
    }
  }
  return spent;
}

/** A transaction that may go into the index: its taproot outputs (none empty) and its scan inputs. */
export interface IndexCandidate {
  txid: string;
  outputs: IndexedOutput[];
  inputs: ScanInput[];
}

/** `computeTweaks` of `@repo/bip352` for many transactions' inputs, wherever it runs (a worker thread: tweak-worker.ts). */
export type ComputeTweaks = (inputs: ScanInput[][]) => Promise<Array<Uint8Array | null>>;

/** The candidates that are eligible (`tweaks[i]` of candidate i not null: computeTweaks of their inputs), with their tweaks. */
export function withTweaks(candidates: readonly IndexCandidate[], tweaks: ReadonlyArray<Uint8Array | null>): IndexedTx[] {
  const txs: IndexedTx[] = [];
  tweaks.forEach((tweak, i) => {
    const { txid, outputs } = candidates[i]!;
    if (tweak !== null) txs.push({ txid, tweak, outputs });
  });
  return txs;
}

/**
 * Reads one block of `getblock <hash> 3` into what the index stores: each eligible transaction
 * with a taproot output (its tweak, BIP-352 "Tweak Data": the block's in one `compute` call, in C
 * with the native backend), the taproot outpoints it spends, and BlindBit's two filters.
 * `inputsRead`: the scan inputs the scanner already read of the block's transactions (the same
 * objects), read again for any other.
 * @throws {TypeError} for a block that is not a verbosity-3 answer (the message names the transaction).
 */
export async function readBlock(
  block: RpcBlock,
  compute: ComputeTweaks,
  inputsRead?: ReadonlyMap<object, ScanInput[]>,
): Promise<BlockRecord> {
  if (block === null || typeof block !== 'object' || !Array.isArray(block.tx) || typeof block.hash !== 'string') {
    throw new TypeError('expected a getblock verbosity 3 answer');
  }
  const header = headerFromRpc(block);
  const candidates: IndexCandidate[] = [];
  const spent: SpentOutpoint[] = [];
  const allKeys: Uint8Array[] = [];
  for (const [i, tx] of block.tx.entries()) {
    const where = `tx ${i} (${String(tx?.txid)})`;
    if (!Array.isArray(tx?.vin) || !Array.isArray(tx.vout)) throw new TypeError(`${where}: no vin or vout`);
    const outputs = readTaprootOutputs(tx, where);
    for (const o of outputs) allKeys.push(o.xonly);
    spent.push(...spentTaproot(tx, where));
    if (outputs.length === 0 || i === 0) continue;
    candidates.push({ txid: tx.txid.toLowerCase(), outputs, inputs: inputsRead?.get(tx) ?? scanInputsFromRpc(tx.vin) });
  }
  // The tweaks (the costly part) are computed while the filters are built.
  const tweaks = compute(candidates.map((c) => c.inputs));
  const key = filterKey(block.hash);
  const newOutputsFilter = buildGcsFilter(key, allKeys);
  const spentFilter = buildGcsFilter(key, spentOutpointHashes(spent, block.hash));
  const txs = withTweaks(candidates, await tweaks);
  return {
    height: block.height,
    hash: block.hash.toLowerCase(),
    header,
    time: block.time,
    txs,
    spent,
    newOutputsFilter,
    spentFilter,
  };
}
