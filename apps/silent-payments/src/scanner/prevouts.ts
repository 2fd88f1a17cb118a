import { RpcError } from '@repo/errors';
import type { RpcVin } from '@repo/bip352';
import type { ChainRpcClient } from '../chain-rpc';
import type { RpcTransaction } from './types';

/** Calls of one JSON-RPC batch. */
export const RPC_BATCH = 100;

/** Gives the inputs in `missing` (by parent txid) the scripts of the parents' outputs they spend. */
async function fromParents(rpc: ChainRpcClient, missing: Map<string, RpcVin[]>): Promise<void> {
  const parents = [...missing.keys()];
  for (let i = 0; i < parents.length; i += RPC_BATCH) {
    const chunk = parents.slice(i, i + RPC_BATCH);
    const answers = await rpc.batch(chunk.map((txid) => ({ method: 'getrawtransaction', params: [txid, 1] })));
    answers.forEach((answer, j) => {
      if (answer instanceof RpcError || answer === null || typeof answer !== 'object') return;
      const parent = answer as RpcTransaction;
      for (const vin of missing.get(chunk[j]!) ?? []) {
        const out = parent.vout.find((o) => o.n === vin.vout);
        if (out !== undefined) vin.prevout = { scriptPubKey: { hex: out.scriptPubKey.hex } };
      }
    });
  }
}

/** Gives `inputs` the scripts of the outputs they spend from the UTXO set (`gettxout` without the mempool). */
async function fromUtxoSet(rpc: ChainRpcClient, inputs: RpcVin[]): Promise<void> {
  for (let i = 0; i < inputs.length; i += RPC_BATCH) {
    const chunk = inputs.slice(i, i + RPC_BATCH);
    const answers = await rpc.batch(chunk.map((vin) => ({ method: 'gettxout', params: [vin.txid, vin.vout, false] })));
    answers.forEach((answer, j) => {
      const hex = (answer as { scriptPubKey?: { hex?: unknown } } | null)?.scriptPubKey?.hex;
      if (!(answer instanceof RpcError) && typeof hex === 'string') chunk[j]!.prevout = { scriptPubKey: { hex } };
    });
  }
}

/**
 * Bitcoin Core prints `prevout` only for confirmed transactions (getrawtransaction reads it
 * from the block's undo data), so a mempool transaction's spent scripts are looked up here:
 * from the parent transaction (in the mempool, or anywhere with -txindex), else from the UTXO
 * set (`gettxout` without the mempool, since the mempool already counts the output as spent).
 * Inputs left unresolved leave the transaction unscanned until it confirms.
 */
export async function resolvePrevouts(rpc: ChainRpcClient, txs: RpcTransaction[]): Promise<void> {
  const missing = new Map<string, RpcVin[]>();
  for (const tx of txs) {
    for (const vin of tx.vin) {
      if (vin.prevout !== undefined || typeof vin.txid !== 'string' || typeof vin.vout !== 'number') continue;
      const list = missing.get(vin.txid);
      if (list === undefined) missing.set(vin.txid, [vin]);
      else list.push(vin);
    }
  }
  if (missing.size === 0) return;
  await fromParents(rpc, missing);
  await fromUtxoSet(
    rpc,
    [...missing.values()].flat().filter((vin) => vin.prevout === undefined),
  );
}
