import * as btc from '@scure/btc-signer';
import { taprootTweakPrivKey } from '@scure/btc-signer/utils.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { encodeSilentPaymentAddress } from '@repo/bip352';
import { ADDRESS_PARAMS, buildSilentPayment, type FundedOutput } from '@repo/chain-double';
import type { RegtestNode } from './node';
import type { RegtestWallet } from './wallet';

/** Key types the payment's inputs can have. */
export type InputKind = 'p2tr' | 'p2wpkh';

/** Options of {@link makeSilentPayment}. */
export interface SilentPaymentOptions {
  /** The silent-payment address paid (`tsp…`/`sprt…` of the receiver). */
  address: string;
  /** Satoshis paid to it. */
  sats: bigint;
  /** One input of each kind, in order (default: one P2TR and one P2WPKH). */
  inputs?: InputKind[];
  /** Mine a block after funding the inputs so they are confirmed (default true). */
  confirmInputs?: boolean;
}

/** A payment sent with {@link makeSilentPayment}. */
export interface SilentPayment {
  txid: string;
  hex: string;
  /** Output index paying the address (0); the change is the last output. */
  vout: number;
  sats: bigint;
  /** The x-only output key of the payment (hex), as the receiver should find it. */
  outputKey: string;
  /** The funded outputs spent. */
  coins: FundedOutput[];
}

const NETWORK = {
  bech32: ADDRESS_PARAMS.regtest.bech32,
  pubKeyHash: ADDRESS_PARAMS.regtest.pubKeyHash,
  scriptHash: ADDRESS_PARAMS.regtest.scriptHash,
  wif: 0xef,
};

/** A fresh key of `kind`, with its regtest script and address (P2TR: BIP-86 key path, tweaked private key). */
export function newKey(kind: InputKind): {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  script: Uint8Array;
  address: string;
  internalKey?: Uint8Array;
} {
  const priv = secp256k1.utils.randomSecretKey();
  const pub = secp256k1.getPublicKey(priv, true);
  if (kind === 'p2wpkh') {
    const p = btc.p2wpkh(pub, NETWORK);
    return { privateKey: priv, publicKey: pub, script: p.script, address: p.address };
  }
  const internalKey = pub.subarray(1);
  const p = btc.p2tr(internalKey, undefined, NETWORK);
  const tweaked = taprootTweakPrivKey(priv);
  return { privateKey: tweaked, publicKey: secp256k1.getPublicKey(tweaked, true), script: p.script, address: p.address, internalKey };
}

/**
 * Makes a real silent payment on the node: fresh keys of each input kind, each funded from
 * `wallet` (`sendtoaddress`) and, by default, confirmed in a block mined to the wallet; then
 * a transaction spending those outputs to `address` with the project's BIP-352 sender
 * (`@repo/bip352` through the chain double's `buildSilentPayment`, signed with
 * @scure/btc-signer, 2,000 sats of fee, the change back to the wallet), accepted by the node's
 * `sendrawtransaction` (left in the mempool).
 */
export async function makeSilentPayment(node: RegtestNode, wallet: RegtestWallet, options: SilentPaymentOptions): Promise<SilentPayment> {
  const kinds = options.inputs ?? ['p2tr', 'p2wpkh'];
  if (kinds.length === 0) throw new RangeError('a silent payment needs at least one input');
  const each = options.sats / BigInt(kinds.length) + 10_000n;
  const funded = [];
  for (const kind of kinds) {
    const key = newKey(kind);
    funded.push({ kind, key, out: await wallet.fund(key.address, each) });
  }
  let blockHash = '';
  let height = -1;
  if (options.confirmInputs ?? true) {
    [blockHash] = (await wallet.mine(1)) as [string];
    height = await node.rpc<number>('getblockcount');
  }
  const coins: FundedOutput[] = funded.map(({ kind, key, out }) => ({
    txid: out.txid,
    vout: out.vout,
    amount: out.sats,
    script: key.script,
    privateKey: key.privateKey,
    publicKey: key.publicKey,
    kind,
    address: key.address,
    txHex: out.hex,
    blockHash,
    height,
    ...(key.internalKey ? { internalKey: key.internalKey } : {}),
  }));
  const changeAddress = await wallet.newAddress();
  const changeScript = btc.OutScript.encode(btc.Address(NETWORK).decode(changeAddress));
  const built = buildSilentPayment(coins, [{ address: options.address, sats: options.sats }], changeScript);
  const txid = await node.rpc<string>('sendrawtransaction', [built.hex]);
  if (txid !== built.txid) throw new Error(`sendrawtransaction answered ${txid}, the transaction built is ${built.txid}`);
  const tx = btc.Transaction.fromRaw(Buffer.from(built.hex, 'hex'), { allowUnknownOutputs: true });
  const outputKey = Buffer.from(tx.getOutput(0).script!.subarray(2)).toString('hex');
  return { txid, hex: built.hex, vout: 0, sats: options.sats, outputKey, coins };
}

/** A fresh receiver on regtest: scan and spend keys and their silent-payment address (`tsp1…`). */
export function newSilentPaymentReceiver(): { address: string; scanPriv: Uint8Array; spendPriv: Uint8Array; spendPub: Uint8Array } {
  const scanPriv = secp256k1.utils.randomSecretKey();
  const spendPriv = secp256k1.utils.randomSecretKey();
  const spendPub = secp256k1.getPublicKey(spendPriv, true);
  return {
    address: encodeSilentPaymentAddress(secp256k1.getPublicKey(scanPriv, true), spendPub, 'regtest'),
    scanPriv,
    spendPriv,
    spendPub,
  };
}
