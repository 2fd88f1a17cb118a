import * as btc from '@scure/btc-signer';
import { hexToBytes } from './encoding';
import type { FundedOutput } from './chain';

/** An output of {@link signSpend}: a script and a value in satoshis. */
export interface SpendOutput {
  script: Uint8Array;
  amount: bigint;
}

/** Options of {@link signSpend}. */
export interface SpendOptions {
  /** nLockTime (default 0). */
  lockTime?: number;
  /** nSequence of every input (default 0xfffffffd, as Core's wallet). */
  sequence?: number;
}

/**
 * Builds and signs (with @scure/btc-signer) a transaction spending funded outputs of any
 * kind to `outputs`; returns its hex. The fee is whatever the inputs leave over. Throws when
 * a key does not match its output.
 */
export function signSpend(inputs: FundedOutput[], outputs: SpendOutput[], options: SpendOptions = {}): string {
  const tx = new btc.Transaction({ allowUnknownOutputs: true, lockTime: options.lockTime ?? 0 });
  const sequence = options.sequence ?? 0xfffffffd;
  for (const input of inputs) {
    const witnessUtxo = { script: input.script, amount: input.amount };
    switch (input.kind) {
      case 'p2tr':
        tx.addInput({ txid: input.txid, index: input.vout, sequence, witnessUtxo, tapInternalKey: input.internalKey });
        break;
      case 'p2wpkh':
        tx.addInput({ txid: input.txid, index: input.vout, sequence, witnessUtxo });
        break;
      case 'p2sh-p2wpkh':
        tx.addInput({ txid: input.txid, index: input.vout, sequence, witnessUtxo, redeemScript: input.redeemScript });
        break;
      case 'p2pkh':
        tx.addInput({ txid: input.txid, index: input.vout, sequence, nonWitnessUtxo: hexToBytes(input.txHex) });
        break;
    }
  }
  for (const output of outputs) tx.addOutput({ script: output.script, amount: output.amount });
  inputs.forEach((input, i) => tx.signIdx(input.privateKey, i));
  tx.finalize();
  return tx.hex;
}
