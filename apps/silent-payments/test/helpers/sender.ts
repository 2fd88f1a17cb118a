import * as btc from '@scure/btc-signer';
import { createSilentPaymentOutputs, type SendInput } from '@repo/bip352';
import type { FundedOutput } from '@repo/chain-double';

/** A recipient of {@link buildPayment}: a silent-payment address or a plain script. */
export type Recipient = { address: string; sats: bigint } | { script: Uint8Array; sats: bigint };

const DUMMY_SIG = new Uint8Array(71).fill(0x30);
const FEE = 2_000n;

/**
 * What BIP-352 sees of an input before it is signed: the prevout script and where the public key
 * will sit (witness or scriptSig), with a placeholder signature. The shared secret depends only
 * on the keys and outpoints, so the outputs can be computed before signing.
 */
function unsignedView(coin: FundedOutput): SendInput {
  const base = { txid: coin.txid, vout: coin.vout, prevoutScript: coin.script, privateKey: coin.privateKey };
  switch (coin.kind) {
    case 'p2tr':
      return { ...base, scriptSig: new Uint8Array(0), witness: [new Uint8Array(64)] };
    case 'p2wpkh':
      return { ...base, scriptSig: new Uint8Array(0), witness: [DUMMY_SIG, coin.publicKey] };
    case 'p2sh-p2wpkh':
      return { ...base, scriptSig: Uint8Array.of(coin.redeemScript!.length, ...coin.redeemScript!), witness: [DUMMY_SIG, coin.publicKey] };
    case 'p2pkh':
      return { ...base, scriptSig: Uint8Array.of(DUMMY_SIG.length, ...DUMMY_SIG, 33, ...coin.publicKey), witness: [] };
  }
}

/**
 * Builds and signs (with @scure/btc-signer) a transaction spending `coins` and paying
 * `recipients` in order: silent-payment addresses get the taproot output keys of the bip352
 * sending code (an address listed twice gets k = 0 and 1); the rest of the coins' value,
 * minus a fee, goes to `changeScript`. Returns the raw hex and the vout of each recipient.
 */
export function buildPayment(coins: FundedOutput[], recipients: Recipient[], changeScript: Uint8Array): { hex: string; txid: string; vouts: number[] } {
  const spAddresses = recipients.flatMap((r) => ('address' in r ? [r.address] : []));
  const keys = spAddresses.length > 0 ? createSilentPaymentOutputs(coins.map(unsignedView), spAddresses) : new Map<string, Uint8Array[]>();
  const used = new Map<string, number>();
  const tx = new btc.Transaction({ allowUnknownOutputs: true });
  for (const coin of coins) {
    if (coin.kind === 'p2pkh') {
      tx.addInput({ txid: coin.txid, index: coin.vout, nonWitnessUtxo: btc.RawTx.decode(Buffer.from(coin.txHex, 'hex')) });
    } else {
      tx.addInput({
        txid: coin.txid,
        index: coin.vout,
        witnessUtxo: { script: coin.script, amount: coin.amount },
        ...(coin.kind === 'p2sh-p2wpkh' ? { redeemScript: coin.redeemScript } : {}),
        ...(coin.kind === 'p2tr' ? { tapInternalKey: coin.internalKey } : {}),
      });
    }
  }
  let paid = 0n;
  for (const r of recipients) {
    let script: Uint8Array;
    if ('address' in r) {
      const n = used.get(r.address) ?? 0;
      used.set(r.address, n + 1);
      script = btc.OutScript.encode({ type: 'tr', pubkey: keys.get(r.address)![n]! });
    } else {
      script = r.script;
    }
    tx.addOutput({ script, amount: r.sats });
    paid += r.sats;
  }
  const total = coins.reduce((sum, c) => sum + c.amount, 0n);
  tx.addOutput({ script: changeScript, amount: total - paid - FEE });
  coins.forEach((coin, i) => tx.signIdx(coin.kind === 'p2tr' ? coin.internalPrivateKey! : coin.privateKey, i));
  tx.finalize();
  return { hex: tx.hex, txid: tx.id, vouts: recipients.map((_r, i) => i) };
}

/** A P2WPKH script of a throwaway key (an output that is not a silent payment). */
export function plainScript(seed: number): Uint8Array {
  return btc.OutScript.encode({ type: 'wpkh', hash: new Uint8Array(20).fill(seed) });
}
