import { loadScanAddon } from './backends/native';
import { PackedWriter } from './packed';
import { isP2trHex, scanInputsFromRpc, scanOutputsFromRpc, type RpcVin, type RpcVout } from './rpc';

/** `PackedBlockAnswer.taprootSpends`' height for a prevout Core gave none. */
export const NO_PREVOUT_HEIGHT = 0xffffffff;
/** Bytes of one record of `PackedBlockAnswer.taprootSpends`. */
export const TAPROOT_SPEND_BYTES = 72;

/**
 * What a silent-payment scanner needs of one `getblock <hash> 3` answer, read by the native
 * addon straight from the answer's bytes (native/rpc-block.c).
 */
export interface PackedBlockAnswer {
  hash: string;
  height: number;
  /** undefined for the genesis block. */
  previousblockhash: string | undefined;
  /** the block's nTx, or its number of transactions when the answer has none. */
  nTx: number;
  /** every outpoint the block spends as `txid:vout`, each followed by the spending txid. */
  spends: string[];
  /**
   * The scan inputs of each transaction with a taproot output (not the coinbase), in block
   * order, packed (little-endian): txid (32) · inputs (u32) · outputs (u32) · per input: txid
   * (32), vout (u32), scriptSig, witness items (u32 count, then each), prevout scriptPubKey · per
   * taproot output: n (u32), value in BTC (f64), scriptPubKey (34); each byte string as its
   * length (u32) then its bytes. Its own ArrayBuffer (transferable).
   */
  jobs: Uint8Array;
  /** where each packed transaction starts in `jobs`. */
  offsets: number[];
  /**
   * Every input spending a taproot output (its prevout's script P2TR), 72 bytes each: the
   * outpoint's txid (32, as printed) · vout (u32 LE) · the height of the block that created the
   * output (u32 LE, {@link NO_PREVOUT_HEIGHT} when the prevout has none) · the spending txid (32,
   * as printed). What a tweak index keeps of a block's spends.
   */
  taprootSpends: Uint8Array;
  /** The x-only keys (32 bytes each) of the coinbase's taproot outputs (the only ones not in `jobs`). */
  coinbaseKeys: Uint8Array;
  /** The header's other fields, when the answer has them all. */
  header?: { version: number; merkleroot: string; time: number; bits: string; nonce: number };
  /** Transactions left out of `jobs` because their inputs or outputs could not be read (only {@link packRpcBlock} gives any). */
  refused: Array<{ txid: string; error: string }>;
}

interface RawPacked {
  hash: string;
  height: number;
  previousblockhash: string | undefined;
  nTx: number;
  spends: string;
  jobs: ArrayBuffer;
  offsets: ArrayBuffer;
  taprootSpends: ArrayBuffer;
  coinbaseKeys: ArrayBuffer;
  version?: number;
  merkleroot?: string;
  time?: number;
  bits?: string;
  nonce?: number;
}

type Pack = (body: Uint8Array, rpcId: string) => RawPacked | undefined;

let pack: Pack | null | undefined;

function loadPack(): Pack | null {
  try {
    return (loadScanAddon() as unknown as { packBlockAnswer: Pack }).packBlockAnswer;
  } catch {
    return null; // no addon (no C compiler at install): every answer goes to JSON.parse
  }
}

/**
 * Reads a `getblock <hash> 3` answer (the raw JSON-RPC envelope, `id` = `rpcId`) without
 * JSON.parse. Only the answers a node sends for a block are handled: for anything else (an
 * error answer, another id, a field of an unexpected type or form, invalid JSON, or no native
 * addon) it returns undefined and the caller parses the answer itself; whatever it does return
 * is what JSON.parse and the fields' plain reading give (the tests compare the two).
 */
export function packBlockAnswer(body: Uint8Array, rpcId: string): PackedBlockAnswer | undefined {
  if (pack === undefined) pack = loadPack();
  const raw = pack?.(body, rpcId);
  if (raw === undefined) return undefined;
  return {
    hash: raw.hash,
    height: raw.height,
    previousblockhash: raw.previousblockhash,
    nTx: raw.nTx,
    spends: raw.spends === '' ? [] : raw.spends.slice(0, -1).split(','),
    jobs: new Uint8Array(raw.jobs),
    offsets: Array.from(new Uint32Array(raw.offsets)),
    taprootSpends: new Uint8Array(raw.taprootSpends),
    coinbaseKeys: new Uint8Array(raw.coinbaseKeys),
    ...(raw.merkleroot === undefined
      ? {}
      : { header: { version: raw.version!, merkleroot: raw.merkleroot, time: raw.time!, bits: raw.bits!, nonce: raw.nonce! } }),
    refused: [],
  };
}

/** A transaction of a parsed `getblock <hash> 3` answer, as {@link packRpcBlock} reads it. */
interface RpcBlockTx {
  txid: string;
  vin: RpcVin[];
  vout: RpcVout[];
}

/** A parsed `getblock <hash> 3` answer, as {@link packRpcBlock} reads it. */
export interface RpcBlockAnswer {
  hash: string;
  height: number;
  previousblockhash?: string;
  nTx?: number;
  version?: number;
  merkleroot?: string;
  time?: number;
  bits?: string;
  nonce?: number;
  tx: RpcBlockTx[];
}

/** A 72-byte record of `taprootSpends` (hex as printed). */
function taprootSpend(w: PackedWriter, txid: string, vout: number, height: unknown, spender: string): void {
  const valid = typeof height === 'number' && Number.isSafeInteger(height) && height >= 0 && height < NO_PREVOUT_HEIGHT;
  if (!Number.isInteger(vout) || vout < 0 || vout > 0xffffffff) return; // not an outpoint: no record (the native reader gives up)
  const start = w.length;
  if (!w.hexFixed(txid, 32)) return w.rewind(start); // not a txid: no record (the native reader gives up)
  w.u32(vout);
  w.u32(valid ? height : NO_PREVOUT_HEIGHT);
  if (!w.hexFixed(spender, 32)) w.rewind(start);
}

/**
 * The answer {@link packBlockAnswer} gives, read from a block already parsed (by JSON.parse):
 * for the answers the native reader leaves, and where there is no native addon. A transaction
 * whose inputs or taproot outputs cannot be read goes to `refused` with the reading's error
 * (scanInputsFromRpc's, scanOutputsFromRpc's), the others are packed as the native reader packs them.
 * @throws {TypeError} for a transaction without vin or vout, or an input without its prevout
 *   (an answer below verbosity 3); the message says which.
 */
export function packRpcBlock(block: RpcBlockAnswer): PackedBlockAnswer {
  const jobs = new PackedWriter();
  const offsets: number[] = [];
  const spends: string[] = [];
  const taproot = new PackedWriter(1 << 12);
  const coinbaseKeys = new PackedWriter(64);
  const refused: PackedBlockAnswer['refused'] = [];
  for (const tx of block.tx) {
    if (!Array.isArray(tx?.vin) || !Array.isArray(tx.vout)) throw new TypeError(`transaction ${String(tx?.txid)}: no vin or vout`);
    const coinbase = typeof tx.vin[0]?.coinbase === 'string';
    for (const v of tx.vin) {
      if (typeof v.txid !== 'string' || typeof v.vout !== 'number') continue;
      spends.push(`${v.txid}:${v.vout}`, tx.txid);
      if (isP2trHex(v.prevout?.scriptPubKey?.hex)) taprootSpend(taproot, v.txid, v.vout, v.prevout!.height, tx.txid);
    }
    if (!tx.vout.some((o) => isP2trHex(o?.scriptPubKey?.hex)) || tx.vin.length === 0) continue;
    if (coinbase) {
      for (const o of tx.vout) if (isP2trHex(o.scriptPubKey.hex)) coinbaseKeys.hexFixed(o.scriptPubKey.hex.slice(4), 32);
      continue;
    }
    if (tx.vin.some((v) => v?.prevout === undefined)) {
      throw new TypeError(
        `transaction ${tx.txid} comes without prevouts: the node must support getblock verbosity 3 (Bitcoin Core 25 or later)`,
      );
    }
    try {
      const inputs = scanInputsFromRpc(tx.vin);
      const { outputs, values } = scanOutputsFromRpc(tx.vout);
      const start = jobs.length;
      try {
        jobs.transaction({ txid: tx.txid, inputs, outputs, values });
      } catch (err) {
        jobs.rewind(start);
        throw err;
      }
      offsets.push(start);
    } catch (err) {
      refused.push({ txid: tx.txid, error: (err as Error).message });
    }
  }
  const { version, merkleroot, time, bits, nonce } = block;
  const hasHeader = [version, merkleroot, time, bits, nonce].every((field) => field !== undefined);
  return {
    hash: block.hash,
    height: block.height,
    previousblockhash: block.previousblockhash,
    nTx: typeof block.nTx === 'number' ? block.nTx : block.tx.length,
    spends,
    jobs: jobs.take(),
    offsets,
    taprootSpends: taproot.take(),
    coinbaseKeys: coinbaseKeys.take(),
    ...(hasHeader ? { header: { version: version!, merkleroot: merkleroot!, time: time!, bits: bits!, nonce: nonce! } } : {}),
    refused,
  };
}
