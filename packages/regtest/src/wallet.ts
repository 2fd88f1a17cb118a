import type { RegtestNode } from './node';

/** A wallet of a {@link RegtestNode} (`createwallet`). */
export interface RegtestWallet {
  readonly name: string;
  /** `getnewaddress "" <type>` (bech32 by default). */
  newAddress(type?: 'bech32' | 'bech32m' | 'legacy' | 'p2sh-segwit'): Promise<string>;
  /** Mines `count` blocks paying this wallet; returns their hashes. */
  mine(count?: number): Promise<string[]>;
  /** `sendtoaddress` of `sats` to `address` (mempool only); returns where the output is. */
  fund(address: string, sats: bigint): Promise<FundingOutput>;
  /** Confirmed balance in BTC. */
  balance(): Promise<number>;
}

/** An output the wallet paid: its outpoint, value and the whole transaction. */
export interface FundingOutput {
  txid: string;
  vout: number;
  sats: bigint;
  hex: string;
}

/** Satoshis as Core's decimal BTC string (`0.00100000`), never a float. */
export function satsToBtcString(sats: bigint): string {
  const whole = sats / 100_000_000n;
  const frac = (sats % 100_000_000n).toString().padStart(8, '0');
  return `${whole}.${frac}`;
}

/** Creates (and loads) a descriptor wallet `name` on the node. */
export async function createWallet(node: RegtestNode, name = 'w'): Promise<RegtestWallet> {
  await node.rpc('createwallet', [name]);
  const wallet: RegtestWallet = {
    name,
    newAddress: (type = 'bech32') => node.rpc<string>('getnewaddress', ['', type], name),
    async mine(count = 1) {
      const address = await wallet.newAddress();
      return node.rpc<string[]>('generatetoaddress', [count, address]);
    },
    async fund(address, sats) {
      // The amount goes as a JSON number written from the exact decimal string (no float rounding).
      const body = `{"jsonrpc":"1.0","id":"fund","method":"sendtoaddress","params":["${address}",${satsToBtcString(sats)}]}`;
      const reply = await node.post(body, { path: `/wallet/${encodeURIComponent(name)}` });
      const parsed = JSON.parse(reply.text) as { result: string | null; error: { message: string } | null };
      if (parsed.error || parsed.result === null) throw new Error(`sendtoaddress: ${parsed.error?.message ?? 'no txid'}`);
      const txid = parsed.result;
      const tx = await node.rpc<{ hex: string; vout: Array<{ n: number; scriptPubKey: { address?: string } }> }>('getrawtransaction', [
        txid,
        1,
      ]);
      const out = tx.vout.find((o) => o.scriptPubKey.address === address);
      if (out === undefined) throw new Error(`sendtoaddress ${txid} has no output to ${address}`);
      return { txid, vout: out.n, sats, hex: tx.hex };
    },
    balance: () => node.rpc<number>('getbalance', [], name),
  };
  return wallet;
}

/**
 * Creates wallet `name` and mines 101 blocks to it, so one coinbase (50 BTC on regtest) is
 * spendable; returns the wallet.
 */
export async function createFundedWallet(node: RegtestNode, name = 'w'): Promise<RegtestWallet> {
  const wallet = await createWallet(node, name);
  await wallet.mine(101);
  return wallet;
}
