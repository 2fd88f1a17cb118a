import { loadScanAddon } from './backends/native';

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
}

interface RawPacked {
  hash: string;
  height: number;
  previousblockhash: string | undefined;
  nTx: number;
  spends: string;
  jobs: ArrayBuffer;
  offsets: ArrayBuffer;
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
  };
}
