import { isP2trHex, scanInputsFromRpc, scanOutputsFromRpc, type FoundOutput, type ScanInput, type ScanOutput } from '@repo/bip352';
import { ChainRpcError } from '../chain-rpc';
import { paymentId, type SpendSeen } from '../store';
import { yieldToEventLoop, type ScanContext } from './context';
import type { RpcBlock, RpcTransaction } from './types';

/** Transactions scanned between two turns of the event loop, so HTTP requests stay served. */
const YIELD_EVERY = 64;

/** A transaction of ours found by the receiver: what it found and the value (BTC) of each output found. */
export interface Hit {
  txid: string;
  found: FoundOutput[];
  values: number[];
}

/** A block as the node sent it, with what the scan found in it: what every block consumer reads. */
export interface ScannedBlock {
  hash: string;
  height: number;
  previousblockhash: string | undefined;
  /** Transactions in the block. */
  nTx: number;
  /** The block's transactions as the node sent them (`getblock <hash> 3`: prevouts included). */
  tx: RpcTransaction[];
  /** The node's whole answer, header fields included, for consumers that keep more of it (the tweak index). */
  answer: RpcBlock;
  /** The transactions paying us. */
  hits: Hit[];
  /** Every outpoint the block spends, with the spending txid. */
  spends: SpendSeen[];
  /** The scan inputs read of each transaction that can pay us, for consumers that read them too (the tweak index). */
  inputs: Map<RpcTransaction, ScanInput[]>;
  /** Transactions the library refused (they cannot pay us by BIP-352 rules), and why. */
  skipped: Array<{ txid: string; error: string }>;
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
 * library refused. Transactions that cannot pay us are left out. The scan inputs read go to
 * `inputsRead` when given.
 */
export function scanTransactions(
  ctx: ScanContext,
  txs: RpcTransaction[],
  inputsRead?: Map<RpcTransaction, ScanInput[]>,
): { hits: Hit[]; skipped: ScannedBlock['skipped'] } {
  const hits: Hit[] = [];
  const skipped: ScannedBlock['skipped'] = [];
  const run: Array<{ tx: RpcTransaction; inputs: ScanInput[]; outputs: ScanOutput[] }> = [];
  for (const tx of txs) {
    const input = scanInputOf(tx);
    if (input === undefined) continue;
    if ('error' in input) skipped.push({ txid: tx.txid, error: input.error });
    else {
      run.push({ tx, ...input });
      inputsRead?.set(tx, input.inputs);
    }
  }
  // one call of the receiver for all of them: its native scanner multiplies several at once
  ctx.book.receiver.scanTransactions(run).forEach((found, i) => {
    const { tx } = run[i]!;
    if (found instanceof Error) skipped.push({ txid: tx.txid, error: found.message });
    else if (found.length > 0) hits.push({ txid: tx.txid, found, values: valuesOf(tx, found) });
  });
  return { hits, skipped };
}

/**
 * Scans a block as the node sent it, {@link YIELD_EVERY} transactions at a time with a turn of
 * the event loop between them, so HTTP requests stay served.
 */
export async function scanBlock(ctx: ScanContext, block: RpcBlock): Promise<ScannedBlock> {
  const scanned: ScannedBlock = {
    hash: block.hash,
    height: block.height,
    previousblockhash: block.previousblockhash,
    nTx: block.nTx ?? block.tx.length,
    tx: block.tx,
    answer: block,
    hits: [],
    spends: [],
    inputs: new Map(),
    skipped: [],
  };
  for (let start = 0; start < block.tx.length; start += YIELD_EVERY) {
    const txs = block.tx.slice(start, start + YIELD_EVERY);
    for (const tx of txs) scanned.spends.push(...spendsOf(tx));
    const { hits, skipped } = scanTransactions(ctx, txs, scanned.inputs);
    scanned.hits.push(...hits);
    scanned.skipped.push(...skipped);
    if (start + YIELD_EVERY < block.tx.length) await yieldToEventLoop();
  }
  return scanned;
}
