import * as btc from '@scure/btc-signer';
import { createSilentPaymentOutputs, type SendInput } from '@repo/bip352';
import type { FundedOutput } from './chain';
import { hexToBytes } from './encoding';
import { signSpend } from './spend';

/** A recipient of {@link buildSilentPayment}: a silent-payment address or a plain script. */
export type PaymentRecipient = { address: string; sats: bigint } | { script: Uint8Array; sats: bigint };

const DUMMY_SIG = new Uint8Array(71).fill(0x30);
const FEE = 2_000n;

/**
 * What BIP-352 sees of a funded output spent as an input, before signing: the prevout script and
 * where the public key will sit (witness or scriptSig), with a placeholder signature. The shared
 * secret depends only on keys and outpoints, so outputs can be computed before signing.
 */
export function silentPaymentInputView(coin: FundedOutput): SendInput {
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
 * Builds and signs a transaction spending `coins` and paying `recipients` in order: silent-payment
 * addresses get the taproot output keys of the BIP-352 sending code (an address listed twice gets
 * k = 0 and 1); the rest of the coins' value, minus a 2,000-sat fee, goes to `changeScript`.
 * Returns the raw hex, the txid and the vout of each recipient.
 */
export function buildSilentPayment(
  coins: FundedOutput[],
  recipients: PaymentRecipient[],
  changeScript: Uint8Array,
): { hex: string; txid: string; vouts: number[] } {
  const spAddresses = recipients.flatMap((r) => ('address' in r ? [r.address] : []));
  const keys =
    spAddresses.length > 0 ? createSilentPaymentOutputs(coins.map(silentPaymentInputView), spAddresses) : new Map<string, Uint8Array[]>();
  const used = new Map<string, number>();
  const outputs = recipients.map((r) => {
    if (!('address' in r)) return { script: r.script, amount: r.sats };
    const n = used.get(r.address) ?? 0;
    used.set(r.address, n + 1);
    return { script: btc.OutScript.encode({ type: 'tr', pubkey: keys.get(r.address)![n]! }), amount: r.sats };
  });
  const total = coins.reduce((sum, c) => sum + c.amount, 0n);
  const paid = outputs.reduce((sum, o) => sum + o.amount, 0n);
  const hex = signSpend(coins, [...outputs, { script: changeScript, amount: total - paid - FEE }]);
  const txid = btc.Transaction.fromRaw(hexToBytes(hex), { allowUnknownOutputs: true }).id;
  return { hex, txid, vouts: recipients.map((_r, i) => i) };
}

/** A P2WPKH script of a throwaway key (an output that is not a silent payment). */
export function plainScript(seed: number): Uint8Array {
  return btc.OutScript.encode({ type: 'wpkh', hash: new Uint8Array(20).fill(seed) });
}
