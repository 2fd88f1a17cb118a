import type { RegtestNode } from './node';
import { createWallet, satsToBtcString } from './wallet';

/** Options of {@link buildDenseChain}. */
export interface DenseChainOptions {
  /** Dense blocks to mine. */
  blocks: number;
  /** Transactions in each dense block (1 input, 2 outputs: ~600 weight units each). */
  txsPerBlock: number;
  /** Wallets the coins are spread over; default 8. */
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

/** Calls per JSON-RPC batch. */
const BATCH = 500;
const FEE_SATS = 1_000n;
/** The small output of each transaction; the large one carries the rest into the next block. */
const SMALL_SATS = 5_000n;
const ADDRESSES_PER_WALLET = 32;

/** An output a dense transaction spends: where it is, its value, its script and the wallet holding its key. */
interface Coin {
  txid: string;
  vout: number;
  sats: bigint;
  scriptPubKey: string;
  owner: number;
}

interface WalletAddress {
  address: string;
  scriptPubKey: string;
}

function btcToSats(btc: number): bigint {
  return BigInt(Math.round(btc * 1e8));
}

/** One JSON-RPC batch (an array of calls) to `path`; throws on the first error. */
async function batch<T>(node: RegtestNode, calls: Array<{ method: string; params: string }>, path = '/'): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < calls.length; start += BATCH) {
    const chunk = calls.slice(start, start + BATCH);
    const body = `[${chunk.map((c, i) => `{"jsonrpc":"1.0","id":${i},"method":"${c.method}","params":${c.params}}`).join(',')}]`;
    const reply = await node.post(body, { path });
    const answers = JSON.parse(reply.text) as Array<{ id: number; result: T; error: { message: string } | null }>;
    for (const a of answers.sort((x, y) => x.id - y.id)) {
      if (a.error) throw new Error(`${chunk[a.id]!.method}: ${a.error.message}`);
      results.push(a.result);
    }
  }
  return results;
}

/**
 * Builds dense regtest blocks with Bitcoin Core's own wallets. Coins are spread over several
 * descriptor wallets on P2TR (bech32m) and P2WPKH (bech32) addresses; each dense transaction
 * spends one named output (no coin selection) to a large output and a small one, on addresses of
 * two other wallets, alternating P2TR and P2WPKH, and the next block spends the large outputs of
 * the one before. 2,500 transactions make a block of ~1.5 M weight units.
 *
 * Bitcoin Core's wallet slows down badly when it tracks thousands of unconfirmed transactions
 * (each one is written to every wallet it touches), so the wallets sign every block's
 * transactions first (`signrawtransactionwithwallet` with the previous outputs named, since the
 * parents are not broadcast yet), then are unloaded while the transactions are sent and the blocks
 * mined: the node alone accepts them far faster. The wallets stay unloaded (loading one again
 * rescans every dense block); `loadwallet dense-<i>` brings one back.
 */
export async function buildDenseChain(node: RegtestNode, options: DenseChainOptions): Promise<DenseChain> {
  const log = options.log ?? (() => undefined);
  const count = Math.max(2, options.wallets ?? 8);
  const names = Array.from({ length: count }, (_, i) => `dense-${i}`);
  const wallets = [];
  for (const name of names) wallets.push(await createWallet(node, name));

  const addresses: WalletAddress[][] = [];
  for (const name of names) {
    const path = `/wallet/${name}`;
    const fresh = await batch<string>(
      node,
      Array.from({ length: ADDRESSES_PER_WALLET }, (_, i) => ({
        method: 'getnewaddress',
        params: `["", "${i % 2 === 0 ? 'bech32m' : 'bech32'}"]`,
      })),
      path,
    );
    const infos = await batch<{ scriptPubKey: string }>(
      node,
      fresh.map((address) => ({ method: 'getaddressinfo', params: `["${address}"]` })),
      path,
    );
    addresses.push(fresh.map((address, i) => ({ address, scriptPubKey: infos[i]!.scriptPubKey })));
  }

  // One mature coinbase (50 BTC) per wallet, then each wallet fans its coinbase out.
  for (const wallet of wallets) await wallet.mine(1);
  await wallets[0]!.mine(100);
  const perWallet = Math.ceil(options.txsPerBlock / count);
  const fanOutSats = BigInt(Math.min(15_000_000, Math.floor(4_900_000_000 / perWallet)));
  const needed = BigInt(options.blocks) * (SMALL_SATS + FEE_SATS) + 1_000n;
  if (fanOutSats < needed)
    throw new Error(`buildDenseChain: ${options.txsPerBlock} transactions a block over ${options.blocks} blocks need more wallets`);
  log(`fan-out: ${perWallet} outputs of ${fanOutSats} sats in each of ${count} wallets`);
  for (let w = 0; w < count; w++) {
    // sendmany takes one amount per address: as many fresh addresses as outputs
    const fresh = await batch<string>(
      node,
      Array.from({ length: perWallet }, (_, i) => ({ method: 'getnewaddress', params: `["", "${i % 2 === 0 ? 'bech32m' : 'bech32'}"]` })),
      `/wallet/${names[w]}`,
    );
    const amounts: Record<string, string> = {};
    for (const address of fresh) amounts[address] = satsToBtcString(fanOutSats);
    await node.rpc('sendmany', ['', amounts], names[w]);
  }
  await wallets[0]!.mine(1);

  let coins: Coin[] = [];
  for (let w = 0; w < count; w++) {
    const list = await node.rpc<Array<{ txid: string; vout: number; amount: number; scriptPubKey: string }>>('listunspent', [1], names[w]);
    for (const u of list) {
      const sats = btcToSats(u.amount);
      if (sats === fanOutSats) coins.push({ txid: u.txid, vout: u.vout, sats, scriptPubKey: u.scriptPubKey, owner: w });
    }
  }
  coins = coins.slice(0, options.txsPerBlock);
  if (coins.length < options.txsPerBlock) throw new Error(`buildDenseChain: only ${coins.length} fan-out outputs`);

  // Sign every block's transactions while no transaction is unconfirmed.
  const started = Date.now();
  const blocks: string[][] = [];
  let pick = 0;
  for (let b = 0; b < options.blocks; b++) {
    const plans = coins.map((coin) => {
      const to = (coin.owner + 1 + (pick % (count - 1))) % count;
      const change = (coin.owner + 1 + ((pick + 3) % (count - 1))) % count;
      const large = addresses[to]![pick % ADDRESSES_PER_WALLET]!;
      const small = addresses[change]![(pick + 1) % ADDRESSES_PER_WALLET]!;
      pick++;
      return { coin, to, large, small, largeSats: coin.sats - SMALL_SATS - FEE_SATS };
    });
    const raw = await batch<string>(
      node,
      plans.map((p) => ({
        method: 'createrawtransaction',
        params: `[[{"txid":"${p.coin.txid}","vout":${p.coin.vout}}],[{"${p.large.address}":${satsToBtcString(p.largeSats)}},{"${p.small.address}":${satsToBtcString(SMALL_SATS)}}]]`,
      })),
    );
    const signed: string[] = new Array<string>(plans.length);
    for (let w = 0; w < count; w++) {
      const mine = plans.map((p, i) => ({ p, i })).filter(({ p }) => p.coin.owner === w);
      const results = await batch<{ hex: string; complete: boolean; errors?: Array<{ error: string }> }>(
        node,
        mine.map(({ p, i }) => ({
          method: 'signrawtransactionwithwallet',
          params: `["${raw[i]}",[{"txid":"${p.coin.txid}","vout":${p.coin.vout},"scriptPubKey":"${p.coin.scriptPubKey}","amount":${satsToBtcString(p.coin.sats)}}]]`,
        })),
        `/wallet/${names[w]}`,
      );
      results.forEach((r, j) => {
        if (!r.complete) throw new Error(`signrawtransactionwithwallet: ${r.errors?.[0]?.error ?? 'incomplete'}`);
        signed[mine[j]!.i] = r.hex;
      });
    }
    const txids = await batch<{ txid: string }>(
      node,
      signed.map((hex) => ({ method: 'decoderawtransaction', params: `["${hex}"]` })),
    );
    blocks.push(signed);
    coins = plans.map((p, i) => ({ txid: txids[i]!.txid, vout: 0, sats: p.largeSats, scriptPubKey: p.large.scriptPubKey, owner: p.to }));
    log(`block ${b + 1}/${options.blocks}: ${signed.length} transactions signed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }

  // Send and mine with the wallets unloaded.
  for (const name of names) await node.rpc('unloadwallet', [name]);
  const miner = addresses[0]![0]!.address;
  const firstHeight = (await node.rpc<number>('getblockcount')) + 1;
  const weights: number[] = [];
  let transactions = 0;
  for (const txs of blocks) {
    const sentAt = Date.now();
    await batch<string>(
      node,
      txs.map((hex) => ({ method: 'sendrawtransaction', params: `["${hex}"]` })),
    );
    const [hash] = await node.rpc<string[]>('generatetoaddress', [1, miner]);
    const block = await node.rpc<{ weight: number; nTx: number; height: number }>('getblock', [hash, 1]);
    if (block.nTx !== txs.length + 1) throw new Error(`block ${block.height} has ${block.nTx - 1} of ${txs.length} transactions`);
    weights.push(block.weight);
    transactions += txs.length;
    log(
      `block ${block.height}: ${block.nTx} transactions, ${block.weight} WU, sent and mined in ${((Date.now() - sentAt) / 1000).toFixed(1)} s`,
    );
  }
  return { firstHeight, tipHeight: firstHeight + options.blocks - 1, transactions, weights };
}
