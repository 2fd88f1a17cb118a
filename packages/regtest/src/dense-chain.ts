import type { RegtestNode } from './node';
import { createWallet, satsToBtcString } from './wallet';

/** Options of {@link buildDenseChain}. */
export interface DenseChainOptions {
  /** Dense blocks to mine. */
  blocks: number;
  /** Transactions in each dense block (1 input, 2 outputs: ~600 weight units each). */
  txsPerBlock: number;
  /** Wallets the coins are spread over (Bitcoin Core's wallet slows past a few hundred unconfirmed transactions each); default 8. */
  wallets?: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** The chain built: the dense blocks are `firstHeight`…`tipHeight`. */
export interface DenseChain {
  firstHeight: number;
  tipHeight: number;
  transactions: number;
  /** Weight of each dense block (weight units). */
  weights: number[];
}

const BATCH = 250;
const FEE_SATS = 1_000n;
const FAN_OUT_SATS = 15_000_000n;

interface Utxo {
  txid: string;
  vout: number;
  sats: bigint;
}

function btcToSats(btc: number): bigint {
  return BigInt(Math.round(btc * 1e8));
}

/** One JSON-RPC batch (an array of calls) to `path`; throws on the first error. */
async function batch<T>(node: RegtestNode, calls: Array<{ method: string; params: string }>, path = '/'): Promise<T[]> {
  const body = `[${calls.map((c, i) => `{"jsonrpc":"1.0","id":${i},"method":"${c.method}","params":${c.params}}`).join(',')}]`;
  const reply = await node.post(body, { path });
  const answers = JSON.parse(reply.text) as Array<{ id: number; result: T; error: { message: string } | null }>;
  return answers
    .sort((a, b) => a.id - b.id)
    .map((a) => {
      if (a.error) throw new Error(`${calls[a.id]!.method}: ${a.error.message}`);
      return a.result;
    });
}

/**
 * Builds dense regtest blocks with Bitcoin Core's own wallets: coins spread over several
 * descriptor wallets on P2TR (bech32m) and P2WPKH (bech32) addresses, then for each block
 * `txsPerBlock` transactions, each spending one named confirmed output of a wallet to a P2TR
 * and a P2WPKH address of two other wallets (createrawtransaction, signrawtransactionwithwallet
 * and sendrawtransaction in JSON-RPC batches, not the wallet's coin selection), mined into one
 * block. 2,500 transactions make a block of ~1.5 M weight units.
 */
export async function buildDenseChain(node: RegtestNode, options: DenseChainOptions): Promise<DenseChain> {
  const log = options.log ?? (() => undefined);
  const count = options.wallets ?? 8;
  const names = Array.from({ length: count }, (_, i) => `dense-${i}`);
  const wallets = [];
  for (const name of names) wallets.push(await createWallet(node, name));
  const addresses: string[][] = [];
  for (const name of names) {
    const calls = Array.from({ length: 32 }, (_, i) => ({
      method: 'getnewaddress',
      params: `["", "${i % 2 === 0 ? 'bech32m' : 'bech32'}"]`,
    }));
    addresses.push(await batch<string>(node, calls, `/wallet/${name}`));
  }
  // one mature coinbase per wallet
  for (const wallet of wallets) await wallet.mine(1);
  await wallets[0]!.mine(100);
  const perWallet = Math.ceil(options.txsPerBlock / count);
  log(`fan-out: ${perWallet} outputs in each of ${count} wallets`);
  for (let w = 0; w < count; w++) {
    const outputs: Record<string, string> = {};
    // sendmany takes one amount per address: as many addresses as outputs
    const fresh = await batch<string>(
      node,
      Array.from({ length: perWallet }, (_, i) => ({ method: 'getnewaddress', params: `["", "${i % 2 === 0 ? 'bech32m' : 'bech32'}"]` })),
      `/wallet/${names[w]}`,
    );
    for (const address of fresh) outputs[address] = satsToBtcString(FAN_OUT_SATS);
    await node.rpc('sendmany', ['', outputs], names[w]);
  }
  await wallets[0]!.mine(1);
  const firstHeight = (await node.rpc<number>('getblockcount')) + 1;
  const weights: number[] = [];
  let transactions = 0;
  let pick = 0;
  for (let b = 0; b < options.blocks; b++) {
    const started = Date.now();
    const utxos: Utxo[][] = [];
    for (const name of names) {
      const list = await node.rpc<Array<{ txid: string; vout: number; amount: number; spendable: boolean }>>('listunspent', [1], name);
      utxos.push(
        list.filter((u) => btcToSats(u.amount) > 4n * FEE_SATS).map((u) => ({ txid: u.txid, vout: u.vout, sats: btcToSats(u.amount) })),
      );
    }
    for (let w = 0; w < count; w++) {
      const mine = utxos[w]!.slice(0, perWallet);
      for (let i = 0; i < mine.length; i += BATCH) {
        const chunk = mine.slice(i, i + BATCH);
        const raw = await batch<string>(
          node,
          chunk.map((u) => {
            const half = (u.sats - FEE_SATS) / 2n;
            const a = addresses[(w + 1 + (pick % (count - 1))) % count]![pick % 32]!;
            const c = addresses[(w + 1 + ((pick + 3) % (count - 1))) % count]![(pick + 1) % 32]!;
            pick++;
            return {
              method: 'createrawtransaction',
              params: `[[{"txid":"${u.txid}","vout":${u.vout}}],[{"${a}":${satsToBtcString(half)}},{"${c}":${satsToBtcString(u.sats - FEE_SATS - half)}}]]`,
            };
          }),
        );
        const signed = await batch<{ hex: string; complete: boolean }>(
          node,
          raw.map((hex) => ({ method: 'signrawtransactionwithwallet', params: `["${hex}"]` })),
          `/wallet/${names[w]}`,
        );
        await batch<string>(
          node,
          signed.map((s) => ({ method: 'sendrawtransaction', params: `["${s.hex}"]` })),
        );
        transactions += chunk.length;
      }
    }
    const [hash] = await wallets[0]!.mine(1);
    const block = await node.rpc<{ weight: number; nTx: number; height: number }>('getblock', [hash, 1]);
    weights.push(block.weight);
    log(`block ${block.height}: ${block.nTx} transactions, ${block.weight} WU, built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return { firstHeight, tipHeight: firstHeight + options.blocks - 1, transactions, weights };
}
