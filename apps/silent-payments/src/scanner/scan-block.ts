import {
  isP2trHex,
  packBlockAnswer,
  packRpcBlock,
  scanInputsFromRpc,
  scanOutputsFromRpc,
  type FoundOutput,
  type PackedBlockAnswer,
  type ScanInput,
  type ScanOutput,
} from '@repo/bip352';
import { ChainRpcError, type ChainRpcClient } from '../chain-rpc';
import { paymentId, type SpendSeen } from '../store';
import { yieldToEventLoop, type ScanContext } from './context';
import type { RpcBlock, RpcTransaction } from './types';

/** Packed transactions scanned between two turns of the event loop, so HTTP requests stay served. */
const YIELD_EVERY = 256;

/** A transaction of ours found by the receiver: what it found and the value (BTC) of each output found. */
export interface Hit {
  txid: string;
  found: FoundOutput[];
  values: number[];
}

/** A block as the node sent it, with what the scan found in it: what every block consumer reads. */
export interface ScannedBlock {
  /**
   * The node's answer read once for the scanner and every consumer (`@repo/bip352`'s
   * packBlockAnswer): hash, height, previousblockhash, nTx, the scan inputs and taproot outputs
   * of each transaction that may be a silent payment, packed; the spends, the taproot spends,
   * the header's fields.
   */
  packed: PackedBlockAnswer;
  /** The transactions paying us. */
  hits: Hit[];
  /** Every outpoint the block spends, with the spending txid. */
  spends: SpendSeen[];
  /** Transactions the library refused (they cannot pay us by BIP-352 rules), and why. */
  skipped: Array<{ txid: string; error: string }>;
}

/**
 * The block `hash` (`getblock <hash> 3`) read for the scanner and its consumers, straight from the
 * answer's bytes in C where the native reader takes it (packBlockAnswer); a ChainRpcError as for
 * any call. `parsed` is called when it did not take the answer (it was parsed and read by
 * {@link packedBlock}: the same block, at several times the cost).
 */
export function fetchBlock(rpc: Pick<ChainRpcClient, 'call'>, hash: string, parsed?: () => void): Promise<PackedBlockAnswer> {
  return rpc.call('getblock', [hash, 3], {
    read: packBlockAnswer,
    parse(result) {
      const block = packedBlock(result);
      parsed?.();
      return block;
    },
  });
}

/**
 * A parsed `getblock <hash> 3` answer read as packBlockAnswer reads the bytes (`@repo/bip352`'s
 * packRpcBlock): a ChainRpcError (`garbage`) for an answer that is not a block, or a block whose
 * inputs come without their prevouts (a node older than Core 25).
 */
export function packedBlock(answer: unknown): PackedBlockAnswer {
  const block = asBlock(answer);
  try {
    return packRpcBlock(block);
  } catch (err) {
    throw new ChainRpcError('garbage', (err as Error).message);
  }
}

/** The node's answer to `getblock <hash> 3`, checked to be a block: a ChainRpcError (`garbage`) otherwise. */
export function asBlock(answer: unknown): RpcBlock {
  const block = answer as Partial<RpcBlock> | null;
  if (
    block === null ||
    typeof block !== 'object' ||
    typeof block.hash !== 'string' ||
    typeof block.height !== 'number' ||
    !Array.isArray(block.tx)
  ) {
    throw new ChainRpcError('garbage', 'getblock: the answer is not a block');
  }
  return block as RpcBlock;
}

/** Whether `tx` can pay us: a taproot output and inputs that are not a coinbase; a block without prevouts is garbage. */
function canPayUs(tx: RpcTransaction): boolean {
  if (!tx.vout.some((out) => isP2trHex(out.scriptPubKey.hex)) || tx.vin.length === 0 || typeof tx.vin[0]?.coinbase === 'string')
    return false;
  if (tx.vin.some((vin) => vin.prevout === undefined)) {
    throw new ChainRpcError(
      'garbage',
      `transaction ${tx.txid} comes without prevouts: the node must support getblock verbosity 3 (Bitcoin Core 25 or later)`,
    );
  }
  return true;
}

/** What the receiver needs of `tx`: its inputs and taproot outputs; undefined when it cannot pay us; an error: the library refused its inputs. */
function scanInputOf(tx: RpcTransaction): { inputs: ScanInput[]; outputs: ScanOutput[] } | { error: string } | undefined {
  if (!canPayUs(tx)) return undefined;
  try {
    return { inputs: scanInputsFromRpc(tx.vin), outputs: scanOutputsFromRpc(tx.vout).outputs };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The value (BTC) of each output found in `tx`. */
function valuesOf(tx: RpcTransaction, found: FoundOutput[]): number[] {
  return found.map((f) => tx.vout.find((o) => o.n === f.index)!.value);
}

/** The outpoints a transaction spends, with the spender (coinbase inputs have none). */
export function spendsOf(tx: RpcTransaction): SpendSeen[] {
  const spends: SpendSeen[] = [];
  for (const vin of tx.vin) {
    if (typeof vin.txid === 'string' && typeof vin.vout === 'number')
      spends.push({ id: paymentId(vin.txid, vin.vout), spentTxid: tx.txid });
  }
  return spends;
}

/**
 * What the receiver finds in each of `txs` (a mempool pass): the hits, and the transactions the
 * library refused. Transactions that cannot pay us are left out.
 */
export function scanTransactions(ctx: ScanContext, txs: RpcTransaction[]): { hits: Hit[]; skipped: ScannedBlock['skipped'] } {
  const hits: Hit[] = [];
  const skipped: ScannedBlock['skipped'] = [];
  const run: Array<{ tx: RpcTransaction; inputs: ScanInput[]; outputs: ScanOutput[] }> = [];
  for (const tx of txs) {
    const input = scanInputOf(tx);
    if (input === undefined) continue;
    if ('error' in input) skipped.push({ txid: tx.txid, error: input.error });
    else run.push({ tx, ...input });
  }
  // one call of the receiver for all of them: its native scanner multiplies several at once
  ctx.book.receiver.scanTransactions(run).forEach((found, i) => {
    const { tx } = run[i]!;
    if (found instanceof Error) skipped.push({ txid: tx.txid, error: found.message });
    else if (found.length > 0) hits.push({ txid: tx.txid, found, values: valuesOf(tx, found) });
  });
  return { hits, skipped };
}

/** The spends of a packed answer (`txid:vout`, then the spender, for each). */
function spendsOfPacked(spends: readonly string[]): SpendSeen[] {
  const seen: SpendSeen[] = [];
  for (let i = 0; i < spends.length; i += 2) seen.push({ id: spends[i]!, spentTxid: spends[i + 1]! });
  return seen;
}

/**
 * Scans a block as read for the scanner ({@link fetchBlock}): its packed transactions in C,
 * {@link YIELD_EVERY} at a time with a turn of the event loop between them, so HTTP requests stay served.
 */
export async function scanBlock(ctx: ScanContext, packed: PackedBlockAnswer): Promise<ScannedBlock> {
  const scanned: ScannedBlock = {
    packed,
    hits: [],
    spends: spendsOfPacked(packed.spends),
    skipped: [...packed.refused],
  };
  const { jobs, offsets } = packed;
  for (let start = 0; start < offsets.length; start += YIELD_EVERY) {
    const end = start + YIELD_EVERY < offsets.length ? offsets[start + YIELD_EVERY]! : jobs.length;
    const { hits, refused } = ctx.book.receiver.scanPacked(jobs.subarray(offsets[start], end));
    scanned.hits.push(...hits);
    for (const r of refused) scanned.skipped.push({ txid: r.txid, error: r.error.message });
    if (end < jobs.length) await yieldToEventLoop();
  }
  return scanned;
}
